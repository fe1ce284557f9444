subroutine f(n, x, s)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: s
  integer :: i
  s = 0d0
  do i = 1, n
    s = s + x(i) * x(max(1, n - i + 1))
  end do
end subroutine

recursive subroutine f(n, x, y)
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  if (n <= 0) then
    y = x
  else
    call f(n - 1, x * 1.5d0, y)
    y = y + sin(x)
  end if
end subroutine

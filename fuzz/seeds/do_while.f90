subroutine f(x, y)
  double precision x, y
  integer k
  k = 0
  y = x
  do while (abs(y) > 1d-3 .and. k < 20)
    y = 0.5d0 * y + 0.1d0 * sin(x)
    k = k + 1
  end do
end subroutine

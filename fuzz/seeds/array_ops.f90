subroutine f(n, x, y, s)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n), s
  y = 2d0 * x + x**2
  where (y > 1d0) y = log(y)
  s = sum(y) + dot_product(x, y) + maxval(x)
end subroutine

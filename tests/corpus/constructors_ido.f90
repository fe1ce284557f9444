! Array constructors with implied DO loops (nested, with a step), nested
! constructors and array-valued items, assigned to arrays and sections;
! the implied DO variable keeps its value outside.
! adjit-test: --entry ctors --set n=4 --set x=1,-2,3,-4 --set h=0.5
! adjit-test: --entry ctors --set n=3 --set x=0.25,2,-3 --set h=-1.5
subroutine ctors(n, x, h, a, b, m, k)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), h
  double precision, intent(out) :: a(n), b(2 * n + 2), m(2, n)
  integer, intent(out) :: k
  integer :: i, j
  i = 11
  a = [(i * h + x(i)**2, i = 1, n)]
  b = [h, (/ (x(i) * h, i = n, 1, -1) /), [sin(x)], h * h]
  m = 0
  m(1, :) = [((x(i) * j, j = 1, 1), i = 1, n)]
  m(2, 1:n:2) = [(exp(h * i), i = 1, (n + 1) / 2)]
  k = i
end subroutine ctors

! Whole-array assignment, elementwise expressions with scalars broadcast,
! elemental intrinsics on arrays, sections with strides (a(2:n), a(1:n:2),
! a(n:1:-1)), sections of 2-D arrays (a(:, j), a(i, :)).
! adjit-test: --entry arrexpr --set n=6 --set x=1,2,3,4,5,6 --set alpha=0.5
! adjit-test: --entry arrexpr --set n=4 --set x=-1,0.25,2,-3 --set alpha=2
subroutine arrexpr(n, x, alpha, y, z, m, rev)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), alpha
  double precision, intent(out) :: y(n), z(n), m(3, n), rev(n)
  integer :: j
  double precision :: t(n)
  y = 0
  y = alpha*x + 1
  t = x*y - sqrt(abs(x))
  z(1) = t(1)
  z(2:n) = t(2:n) + x(1:n-1)
  t = z
  z(1:n:2) = -t(1:n:2)
  rev = x(n:1:-1)
  do j = 1, n
    m(:, j) = x(j)
  end do
  m(2, :) = x*y
  m(3, :) = exp(-x**2) + x
  t(1:3) = y(1:3) + rev(n-2:n)
  y(1:3) = t(1:3)
end subroutine arrexpr

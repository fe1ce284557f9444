! Reductions with MASK= and DIM= (rank 1, positional and keyword forms),
! ANY / ALL / COUNT, MAXLOC / MINLOC (first position, within a section,
! with a mask selecting nothing), NORM2, and the elemental MERGE and HYPOT.
! adjit-test: --entry reds --set n=6 --set x=1,-2,3,-4,0.5,6 --set c=0.7
! adjit-test: --entry reds --set n=5 --set x=-1,0.25,2,-3,8 --set c=-1.5
subroutine reds(n, x, c, s, y, k)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), c
  double precision, intent(out) :: s(8), y(n)
  integer, intent(out) :: k(9)
  integer :: iv(1)
  s(1) = sum(x, mask=x > 0) + c * sum(x, 1)
  s(2) = product(x * c, x < 2.5d0) + maxval(x, dim=1, mask=x < 1)
  s(3) = minval(x(2:n), x(2:n) > -3) - sum(x(1:n:2), dim=1, mask=x(1:n:2) /= 3)
  s(4) = norm2(x * c) + norm2(x(2:n), 1)
  s(5) = sum(merge(x, c * x, x > 0)) + merge(c, 2 * c, any(x > 5))
  s(6) = hypot(c, x(1)) + sum(hypot(x, c))
  s(7) = maxval(x, mask=x > 100) / 1d300
  s(8) = dot_product(x(1:n-1), x(2:n))
  y = merge(sin(x), exp(c * x), x < c)
  k(1) = count(x > c)
  k(2) = maxloc(x, 1)
  k(3) = minloc(x, dim=1)
  k(4) = maxloc(x(2:n), 1, mask=x(2:n) < 2)
  k(5) = minloc(x, 1, mask=x > 100)
  k(6) = merge(1, 0, all(x > -5))
  k(7) = merge(1, 0, any(x > 7, 1))
  iv = maxloc(abs(x))
  k(8) = iv(1)
  k(9) = count(x > 0, dim=1, kind=8)
end subroutine reds

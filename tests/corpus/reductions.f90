! Array reductions and inquiry: SUM, PRODUCT, DOT_PRODUCT, MAXVAL, MINVAL,
! SIZE (whole arrays, sections and a 2-D array), and their use in a
! weighted mean and variance.
! adjit-test: --entry reduce --set n=5 --set x=2,-1,4,0.5,3 --set w=1,2,1,0.5,0.25
! adjit-test: --entry reduce --set n=2 --set x=1e-3,1e3 --set w=1,1
subroutine reduce(n, x, w, r, isz)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), w(n)
  double precision, intent(out) :: r(9)
  integer, intent(out) :: isz(3)
  double precision :: t(2, n), mean
  t(1, :) = x
  t(2, :) = w
  mean = dot_product(w, x)/sum(w)
  r(1) = sum(x)
  r(2) = product(x)
  r(3) = mean
  r(4) = sum(w*(x - mean)**2)/sum(w)
  r(5) = maxval(x)
  r(6) = minval(x)
  r(7) = maxval(x(2:n)) - minval(w(1:n-1))
  r(8) = sum(t)
  r(9) = product(t(2, :)) + dot_product(x(1:n-1), x(2:n))
  isz(1) = size(x)
  isz(2) = size(t)
  isz(3) = size(t, 2) + size(w)
end subroutine reduce

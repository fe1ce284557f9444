! Mixed-mode arithmetic: integer division truncation (also negative),
! integer-to-real promotion only at the operator that mixes, REAL(4) with
! REAL(8) promoting to REAL(8), conversions on assignment.
! adjit-test: --entry mixed --set i=7 --set j=2 --set x=1.5 --set d=0.1
! adjit-test: --entry mixed --set i=-7 --set j=2 --set x=-2.25 --set d=3.3
subroutine mixed(i, j, x, d, q, r, out, k)
  implicit none
  integer, intent(in) :: i, j
  real, intent(in) :: x
  double precision, intent(in) :: d
  integer, intent(out) :: q, k(4)
  real, intent(out) :: r(3)
  double precision, intent(out) :: out(5)
  q = i/j
  r(1) = i/j
  r(2) = real(i)/j
  r(3) = x + i/j*x
  out(1) = x*d
  out(2) = i/j + d
  out(3) = d*i/j
  out(4) = i/(j*d)
  out(5) = x/3 + d
  k(1) = x*i
  k(2) = d*j + 0.5d0
  k(3) = -i/j*2
  k(4) = 2**j/3
end subroutine mixed

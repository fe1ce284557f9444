! Every literal form: integers, 1.0, .5, 1., 1.e5, 1.0e0, 1.0E-2, 1.0d0,
! 1.d-3, 1D2, 1.0_dp, 3_ik, .true., .false., and their kinds in arithmetic
! (single-precision literals rounded before promotion).
! adjit-test: --entry lits --set x=1
! adjit-test: --entry lits --set x=0.3
subroutine lits(x, r, s, flags)
  implicit none
  integer, parameter :: dp = kind(1.0d0), ik = kind(1)
  double precision, intent(in) :: x
  double precision, intent(out) :: r(12)
  real, intent(out) :: s(3)
  logical, intent(out) :: flags(2)
  r(1) = x + 1
  r(2) = x + 1.0
  r(3) = x*.5
  r(4) = x + 1.
  r(5) = x*1.e5
  r(6) = x*1.0e0 + 0.1
  r(7) = x*1.0E-2
  r(8) = x + 1.0d0 + 0.1d0
  r(9) = x*1.d-3
  r(10) = x*1D2
  r(11) = x + 0.1_dp
  r(12) = x + 3_ik
  s(1) = 0.1
  s(2) = 1.e-3 + 2.5E+1
  s(3) = .25e1
  flags(1) = .true.
  flags(2) = .FALSE. .or. x > 0.5
end subroutine lits

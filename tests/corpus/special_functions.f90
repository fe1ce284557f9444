! The special-function intrinsics ERF, ERFC, GAMMA, LOG_GAMMA, BESSEL_J0
! and BESSEL_J1, scalar and elemental on an array, in double and single
! precision (LOG_GAMMA of a negative argument: log |gamma|).
! adjit-test: --entry special --set n=3 --set x=0.3,1.7,4.25 --set s=-1.3
! adjit-test: --entry special --set n=2 --set x=2.5,0.8 --set s=0.6
subroutine special(n, x, s, y, z, w)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), s
  double precision, intent(out) :: y(n), z(6), w
  real :: r
  y = erf(x) + 0.5d0*erfc(x*s) + log_gamma(x) + bessel_j0(x)*bessel_j1(x + s)
  z(1) = erf(s)
  z(2) = erfc(s)
  z(3) = gamma(s + 0.1d0*x(1))
  z(4) = log_gamma(s)
  z(5) = bessel_j0(s*x(n))
  z(6) = bessel_j1(s) * gamma(x(1))
  r = real(x(1))
  r = erf(r) + gamma(r) + bessel_j1(r) + log_gamma(r + 1.0)
  w = dble(r)
end subroutine special

! The special-function intrinsics ERF, ERFC, GAMMA, LOG_GAMMA, BESSEL_J0
! and BESSEL_J1, scalar and elemental on an array (LOG_GAMMA of a
! negative argument: log |gamma|; BESSEL_J1 at 0, where the partial
! J0 - J1/x is replaced by its limit 1/2).
! adjit-test: --entry special --set n=3 --set x=0.3,1.7,4.25 --set s=-1.3
! adjit-test: --entry special --set n=2 --set x=2.5,0.8 --set s=0.6
subroutine special(n, x, s, y, z, w)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), s
  double precision, intent(out) :: y(n), z(6), w
  y = erf(x) + 0.5d0*erfc(x*s) + log_gamma(x) + bessel_j0(x)*bessel_j1(x + s)
  z(1) = erf(s)
  z(2) = erfc(s)
  z(3) = gamma(s + 0.1d0*x(1))
  z(4) = log_gamma(s)
  z(5) = bessel_j0(s*x(n))
  z(6) = bessel_j1(s) * gamma(x(1))
  w = erf(x(1)) + gamma(x(1)) + bessel_j1(s*(x(1) - x(1))) + log_gamma(x(1) + 1d0)
end subroutine special

! MIN and MAX with two to five arguments and mixed literal kinds promoted
! explicitly, conversions REAL DBLE FLOAT INT, and the inquiry functions
! HUGE TINY EPSILON for both real kinds and HUGE for integers.
! adjit-test: --entry bounds --set a=1.5 --set b=-2 --set c=0.25 --set k=4
! adjit-test: --entry bounds --set a=-7 --set b=3 --set c=3 --set k=-1
subroutine bounds(a, b, c, k, lo, hi, clip, inq, sinq, ihuge, conv)
  implicit none
  double precision, intent(in) :: a, b, c
  integer, intent(in) :: k
  double precision, intent(out) :: lo, hi, clip, inq(3)
  real, intent(out) :: sinq(3), conv(2)
  integer, intent(out) :: ihuge(3)
  lo = min(a, b)
  hi = max(a, b, c, dble(k), -1.0d0)
  clip = max(min(a, 1.0d0), -1.0d0) + min(a, b, c, 0.5d0*k)
  inq(1) = huge(a)
  inq(2) = tiny(a)
  inq(3) = epsilon(a)
  sinq(1) = huge(1.0)
  sinq(2) = tiny(1.0)
  sinq(3) = epsilon(1.0)
  ihuge(1) = huge(k)
  ihuge(2) = max(k, 2, -k, 3)
  ihuge(3) = min(k, 2, -k) + int(max(a, c))
  conv(1) = real(a) + float(k)
  conv(2) = real(dble(k)/3)
end subroutine bounds

! Elementary intrinsics in double and single precision: ABS SQRT EXP LOG
! LOG10 SIN COS TAN ASIN ACOS ATAN ATAN2 SINH COSH TANH, generic names
! resolving by argument kind.
! adjit-test: --entry elem --set x=0.3 --set y=-1.2 --set xs=0.3
! adjit-test: --entry elem --set x=-0.75 --set y=2.5 --set xs=1.25
subroutine elem(x, y, xs, d, s)
  implicit none
  double precision, intent(in) :: x, y
  real, intent(in) :: xs
  double precision, intent(out) :: d(15)
  real, intent(out) :: s(8)
  d(1) = abs(y)
  d(2) = sqrt(abs(x*y))
  d(3) = exp(x) + exp(y)
  d(4) = log(abs(y))
  d(5) = log10(abs(x))
  d(6) = sin(x) + sin(y)
  d(7) = cos(x)*cos(y)
  d(8) = tan(x)
  d(9) = asin(x)
  d(10) = acos(x)
  d(11) = atan(y)
  d(12) = atan2(x, y) + atan2(-x, -y)
  d(13) = sinh(y)
  d(14) = cosh(x) + cosh(y)
  d(15) = tanh(y)
  s(1) = abs(-xs)
  s(2) = sqrt(xs)
  s(3) = exp(xs)
  s(4) = log(xs)
  s(5) = sin(xs) + cos(xs)
  s(6) = tan(xs) + atan(xs)
  s(7) = atan2(xs, -1.0)
  s(8) = sinh(xs) + cosh(xs) + tanh(xs) + log10(xs)
end subroutine elem

! Default REAL is single precision: REAL arguments, single-precision
! constants (0.1 is not 0.1d0), single-precision intrinsics, and what a
! DOUBLE PRECISION variable receives from single-precision expressions.
! adjit-test: --entry sp --set n=10 --set x=0.1
! adjit-test: --entry sp --set n=7 --set x=2.5
subroutine sp(n, x, s, d, e, ratio)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: x
  real, intent(out) :: s, ratio
  double precision, intent(out) :: d, e
  integer :: i
  s = 0
  d = 0
  do i = 1, n
    s = s + x*0.1
    d = d + x*0.1
  end do
  e = 0.1
  e = e + sqrt(x) + exp(-x)
  ratio = s/(1.0 + sin(x))
end subroutine sp

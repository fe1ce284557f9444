! Kind spellings: REAL(dp) with dp = kind(1.d0), REAL(wp) with wp from
! selected_real_kind, REAL(8), REAL(KIND=8), REAL(4), literals 1.0_dp, and
! the single-precision results that REAL(4) arithmetic gives.
! adjit-test: --entry kinds --set x=0.1 --set n=10
! adjit-test: --entry kinds --set x=1.7 --set n=3
module prec
  implicit none
  integer, parameter :: dp = kind(1.d0)
  integer, parameter :: wp = selected_real_kind(15, 307)
  integer, parameter :: sp = kind(1.0)
end module prec

subroutine kinds(x, n, a, b, c, d, s)
  use prec
  implicit none
  real(dp), intent(in) :: x
  integer, intent(in) :: n
  real(wp), intent(out) :: a
  real(8), intent(out) :: b
  real(kind=8), intent(out) :: c
  real(kind=dp), intent(out) :: d
  real(sp), intent(out) :: s
  real(4) :: t
  integer :: i
  a = 0.0_dp
  s = 0.0_sp
  t = 0.0
  do i = 1, n
    a = a + x
    t = t + sngl(x)
  end do
  s = t
  b = 1.0_dp/3.0_dp + x
  c = 1.0_wp/3 + 1.0/3
  d = dble(t) - a
end subroutine kinds

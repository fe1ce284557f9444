! Free form: & continuation (with and without a leading & on the next
! line, a continued name and number), ! comments after code and on their own
! lines, ; separating statements; Horner-like rational approximation.
! adjit-test: --entry ratfun --set x=0.5
! adjit-test: --entry ratfun --set x=-1.75
subroutine ratfun(x, num, den, r)
  implicit none
  double precision, intent(in) :: x
  double precision, intent(out) :: num, den, r
  double precision :: t ; integer :: k   ! two declarations, one line
  num = 1.0d0 + x*(0.5d0 + &   ! continued
        x*(0.125d0 + x*0.015625d0))
  den = 1.0d0 - x*(0.5d0 - &
       & x*(0.125d0 - x*0.01&
       &5625d0))
  ! an empty statement and a comment-only line in between
  ;
  t = 0; k = 0
  do k = 1, 3; t = t + x**k/k; end do
  r = num/den + t
  r = r &
      + 0.0d0
end subroutine ratfun

! Griewank's function (seed 001, section 4.1):
!   c = 1 + sum(a(i)**2)/400 - prod(cos(a(i)/sqrt(i)))
! adjit grad examples/griewank.f90 --of c --wrt a --set s=5 --set a=1
subroutine griewank(s, a, c)
  implicit none
  integer, intent(in) :: s
  double precision, intent(in) :: a(s)
  double precision, intent(out) :: c
  double precision d
  integer i
  c = 1
  d = 1.D0
  do i = 1, s
    c = c + (a(i)**2)/400
    d = d*cos(a(i)/sqrt(dble(i)))
  end do
  c = c - d
end subroutine griewank

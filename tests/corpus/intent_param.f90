! Attributes and attribute statements: INTENT(IN/OUT/INOUT), PARAMETER
! (attribute and statement), DIMENSION (attribute and statement); a heat
! equation explicit step on a 1-D rod with a three-point stencil.
! adjit-test: --entry heat --set n=6 --set u=0,1,4,9,16,25 --set nsteps=3
! adjit-test: --entry heat --set n=3 --set u=1,0,1 --set nsteps=1
subroutine heat(n, u, nsteps, energy)
  implicit none
  integer, intent(in) :: n, nsteps
  double precision, intent(inout) :: u
  double precision, intent(out) :: energy
  dimension u(n)
  double precision, parameter :: west = 0.25d0, centre = 0.5d0, east = 0.25d0
  double precision :: alpha
  parameter (alpha = 0.8d0)
  double precision :: old
  dimension old(n)
  integer :: i, k
  do k = 1, nsteps
    old = u
    do i = 2, n - 1
      u(i) = (1 - alpha)*old(i) + alpha*(west*old(i-1) + centre*old(i) &
             + east*old(i+1))
    end do
  end do
  energy = 0
  do i = 1, n
    energy = energy + u(i)**2
  end do
end subroutine heat

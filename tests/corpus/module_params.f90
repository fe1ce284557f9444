! A MODULE with named constants (PARAMETER) and a module variable, USE with
! ONLY: and USE of the whole module; the entry is an external subroutine.
! adjit-test: --entry orbit --set r=1.5e11 --set m=5.97e24
! adjit-test: --entry orbit --set r=4.2e7 --set m=1.0e3
module physics
  implicit none
  double precision, parameter :: g = 6.674d-11, msun = 1.989d30
  double precision, parameter :: pi = 3.14159265358979323846d0
  integer, parameter :: nsteps = 4
  double precision :: scale = 2.0d0
end module physics

module units
  implicit none
  double precision, parameter :: day = 86400.0d0
end module units

subroutine orbit(r, m, v, period, force, days)
  use physics, only: g, msun, pi, nsteps
  use units
  implicit none
  double precision, intent(in) :: r, m
  double precision, intent(out) :: v, period, force, days
  integer :: k
  v = sqrt(g*msun/r)
  period = 2*pi*r/v
  force = g*msun*m/r**2
  days = 0
  do k = 1, nsteps
    days = days + period/(nsteps*day)
  end do
end subroutine orbit

! Module procedures after CONTAINS: the entry is a module subroutine that
! calls a module function and reads and writes a module variable.
! adjit-test: --entry polar --set x=3 --set y=4
! adjit-test: --entry polar --set x=-1 --set y=-1
module geometry
  implicit none
  integer :: ncalls = 0
  double precision, parameter :: rad2deg = 57.295779513082320876798d0
contains
  double precision function radius(x, y)
    double precision, intent(in) :: x, y
    radius = sqrt(x*x + y*y)
    ncalls = ncalls + 1
  end function radius

  subroutine polar(x, y, r, theta, deg, calls)
    double precision, intent(in) :: x, y
    double precision, intent(out) :: r, theta, deg
    integer, intent(out) :: calls
    r = radius(x, y)
    theta = atan2(y, x)
    deg = theta*rad2deg
    call bump()
    calls = ncalls
  end subroutine polar

  subroutine bump()
    ncalls = ncalls + 10
  end subroutine bump
end module geometry

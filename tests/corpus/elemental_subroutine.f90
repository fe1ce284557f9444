! ELEMENTAL subroutines called with arrays: whole arrays and sections for
! INTENT(OUT) and INTENT(INOUT) dummies (written element by element), a
! scalar for a scalar dummy, an array expression for an INTENT(IN) one,
! rank 2.
! adjit-test: --entry drive --set n=3 --set r=1,2,0.5 --set t=0.3,-1.2,2.5 --set m=1,2,3,4,5,6
! adjit-test: --entry drive --set n=4 --set r=0.5,1.5,2,-1 --set t=1,0.25,-0.5,3 --set m=0.5,-1,1.5,2,-2.5,0.25
module esub
  implicit none
contains
  elemental subroutine polar(r, t, x, y)
    double precision, intent(in) :: r, t
    double precision, intent(out) :: x, y
    x = r*cos(t)
    y = r*sin(t)
  end subroutine polar

  elemental subroutine bump(a, s)
    double precision, intent(inout) :: a
    double precision, intent(in) :: s
    a = a*a + s
  end subroutine bump

  subroutine drive(r, t, n, x, y, m)
    integer, intent(in) :: n
    double precision, intent(in) :: r(n), t(n)
    double precision, intent(out) :: x(n), y(n)
    double precision, intent(inout) :: m(2, 3)
    call polar(r, t, x, y)
    call bump(x(2:n), 0.5d0)
    call bump(m, 0.1d0*r(1))
    call bump(m(:, 2), r(1:2) + t(1:2))
    call bump(y(n:1:-2), x(1:2))
  end subroutine drive
end module esub

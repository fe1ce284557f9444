! Type extension without polymorphism: inherited components (`c%x`), the
! parent component (`c%point%x`, assigned and passed whole), structure
! constructors of extended types (positional and keyword), extended types
! as dummies, locals, arrays and module variables, two levels deep.
! adjit-test: --entry extend --set s=1.5 --set t=0.5 --set n=2
! adjit-test: --entry extend --set s=-0.75 --set t=2 --set n=3
module ext_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type :: point
    real(dp) :: x = 0.0_dp, y = 0.0_dp
  end type point
  type, extends(point) :: point3
    real(dp) :: z = 1.0_dp
  end type point3
  type, extends(point3) :: tagged
    integer :: tag = 7
    real(dp) :: w(2)
  end type tagged
  type(point3) :: saved
contains
  real(dp) function plane(p)
    type(point), intent(in) :: p
    plane = 2.0_dp*p%x - p%y
  end function plane

  subroutine lift(p, h)
    type(point3), intent(inout) :: p
    real(dp), intent(in) :: h
    p%z = p%z*h + p%point%x
    p%point%y = p%y + h
  end subroutine lift
end module ext_m

subroutine extend(s, t, n, r, q, k)
  use ext_m
  implicit none
  real(dp), intent(in) :: s, t
  integer, intent(in) :: n
  real(dp), intent(out) :: r(4), q(3)
  integer, intent(out) :: k
  type(point3) :: a, b
  type(tagged) :: g
  type(point) :: p
  type(point3) :: arr(3)
  integer :: i
  a = point3(s, t, s*t)
  b = point3(y=s, z=t)
  call lift(a, t)
  p = a%point
  r(1) = plane(a%point) + a%z
  b%point = point(t, s*s)
  r(2) = b%x*b%point%y + b%z
  g%point3 = a
  g%w = [s, t]
  g%tag = g%tag + n
  g%point3%point%x = g%x + g%w(2)
  r(3) = g%x + g%point%y*g%w(1) + g%point3%z
  do i = 1, 3
    arr(i) = point3(i*s, t, 0.0_dp)
    arr(i)%z = arr(i)%point%x*t + arr(i)%y
  end do
  arr(2)%point = p
  saved = arr(n)
  r(4) = sum(arr%z) + plane(arr(2)%point) + saved%x
  q = [p%x, p%y, saved%z]
  k = g%tag
end subroutine extend

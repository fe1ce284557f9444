! Derived types: real, integer, logical and array components, nested types,
! % access at any depth, whole-structure assignment, structure constructors
! (positional, keyword, component defaults), derived-type dummies, locals and
! module variables; active components are differentiated component-wise.
! adjit-test: --entry transform --set x=0.75 --set y=-1.5 --set k=3
! adjit-test: --entry transform --set x=2 --set y=0.25 --set k=-1
module shapes_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type :: point
    real(dp) :: x = 0.0_dp, y = 0.0_dp
  end type point
  type :: frame
    type(point) :: origin
    real(dp) :: scale = 1.0_dp
    real(dp) :: w(3)
    integer :: count = 0
    logical :: flipped = .false.
  end type frame
  type(frame) :: last_frame
contains
  subroutine apply_frame(f, p, q)
    type(frame), intent(in) :: f
    type(point), intent(in) :: p
    type(point), intent(out) :: q
    q%x = f%origin%x + f%scale*p%x*f%w(1)
    q%y = f%origin%y + f%scale*p%y*f%w(2) + f%w(3)
    if (f%flipped) q = point(q%y, q%x)
  end subroutine apply_frame

  real(dp) function norm2p(p)
    type(point), intent(in) :: p
    norm2p = sqrt(p%x**2 + p%y**2)
  end function norm2p
end module shapes_m

subroutine transform(x, y, k, qx, qy, r, c)
  use shapes_m
  implicit none
  real(dp), intent(in) :: x, y
  integer, intent(in) :: k
  real(dp), intent(out) :: qx, qy, r
  integer, intent(out) :: c
  type(frame) :: f, g
  type(point) :: p, q
  p = point(x, y)
  f%origin = point(y=0.5_dp, x=-x)
  f%scale = 2.0_dp + y
  f%w = [1.0_dp, x, 0.25_dp]
  f%count = f%count + k
  f%flipped = k > 0
  g = f
  g%origin%x = g%origin%x*y
  call apply_frame(g, p, q)
  qx = q%x
  qy = q%y
  r = norm2p(q) + norm2p(p)
  last_frame = g
  last_frame%count = last_frame%count + 1
  c = last_frame%count + f%count
end subroutine transform

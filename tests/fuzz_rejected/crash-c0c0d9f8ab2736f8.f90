! Arrays of derived type: one array per component (`a%x` is an array,
! `a(i)%x` its element, `a(i)%w(j)` the element (j, i) of `a%w`). Element
! and whole-array structure assignment, constructors into elements,
! elements and whole arrays as actual arguments (to scalar and array
! structure dummies, INTENT(OUT) too), whole components in reductions,
! nested types, module variables, component defaults.
! adjit-test: --entry shapes --set s=1.5 --set t=0.5
! adjit-test: --entry shapes --set s=-0.75 --set t=2.25
! adjit-test: --entry springs --set k=3 --set x0=0.25 --set n=5
module geo
  implicit none
  type pt
    double precision :: x = 0, y = 0
    double precision :: w(2) = 1
  end type pt
  type seg
    type(pt) :: a, b
    integer :: tag = 7
  end type seg
  type(pt) :: cloud(9223372036854775807)
contains
  subroutine centroid(n, p, cx, cy)
    integer, intent(in) :: n
    type(pt), intent(in) :: p(n)
    double precision, intent(out) :: cx, cy
    cx = sum(p%x) / n
    cy = sum(p%y) / n
  end subroutine centroid
  double precision function norm2pt(q)
    type(pt), intent(in) :: q
    norm2pt = sqrt(q%x**2 + q%y**2) * q%w(2)
  end function norm2pt
  subroutine mirror(q, r)
    type(pt), intent(in) :: q
    type(pt), intent(out) :: r
    r%x = -q%y
    r%y = q%x
    r%w = q%w(2:1:-1)
  end subroutine mirror
  double precision function length(s)
    type(seg), intent(in) :: s
    length = sqrt((s%b%x - s%a%x)**2 + (s%b%y - s%a%y)**2)
  end function length
end module geo

subroutine shapes(s, t, cx, cy, r, total)
  use geo
  implicit none
  double precision, intent(in) :: s, t
  double precision, intent(out) :: cx, cy, r, total
  type(pt) :: a(4), b(4)
  type(seg) :: path(3)
  integer :: i
  do i = 1, 4
    a(i)%x = s * i
    a(i)%y = t / i
    a(i)%w(1) = i
  end do
  a(2) = pt(s, t, [2d0, 3d0])
  b = a
  b(3) = a(1)
  call mirror(a(4), b(1))
  call centroid(4, b, cx, cy)
  r = norm2pt(a(2)) + b(3)%w(2) + sum(a%x) * a(4)%w(1) + b(1)%w(2)
  cloud(2)%x = r
  r = r + cloud(2)%x * cloud(1)%w(1)
  do i = 1, 3
    path(i)%a = a(i)
    path(i)%b = b(i + 1)
  end do
  path(2)%b%y = path(2)%b%y + s * t
  total = 0
  do i = 1, 3
    total = total + length(path(i)) * path(i)%tag
  end do
end subroutine shapes

subroutine springs(k, x0, n, energy, xs)
  use geo
  implicit none
  double precision, intent(in) :: k, x0
  integer, intent(in) :: n
  double precision, intent(out) :: energy, xs(n)
  type(pt) :: m(n)
  integer :: i
  do i = 1, n
    m(i) = pt(x0 * i, sin(x0 * i), [k, 1d0 / i])
  end do
  energy = 0
  do i = 2, n
    energy = energy + 0.5d0 * m(i)%w(1) * ((m(i)%x - m(i-1)%x)**2 + (m(i)%y - m(i-1)%y)**2) * m(i)%w(2)
  end do
  xs = m%x + m%y
end subroutine springs

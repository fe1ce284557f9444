! Component references of arrays of structures taking whole parts: an
! array component of an element (`a(i)%v`, assigned, reduced, passed) and
! an element of each structure's array component (`a%w(1)`).
! adjit-test: --entry parts --set s=1.5 --set t=0.5
! adjit-test: --entry parts --set s=-0.75 --set t=2.25
! adjit-test: --entry grids --set s=1.5 --set t=0.5
module parts_m
  implicit none
  type cell
    double precision :: v(3)
    double precision :: c = 1
  end type cell
  type grid
    double precision :: m(2, 3)
    type(cell) :: c
  end type grid
contains
  double precision function wsum(n, x)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    integer :: i
    wsum = 0
    do i = 1, n
      wsum = wsum + i * x(i)
    end do
  end function wsum
  subroutine scale3(x, f)
    double precision, intent(inout) :: x(3)
    double precision, intent(in) :: f
    x = x * f
  end subroutine scale3
end module parts_m

subroutine parts(s, t, r1, r2, r3, r4, r5, first)
  use parts_m
  implicit none
  double precision, intent(in) :: s, t
  double precision, intent(out) :: r1, r2, r3, r4, r5
  double precision, intent(out) :: first(4)
  type(cell) :: a(4)
  integer :: i
  do i = 1, 4
    a(i)%v = 0
    a(i)%v(1) = s * i
    a(i)%v(2) = t + i
    a(i)%v(3) = s * t - i
    a(i)%c = i
  end do
  a(2)%v = a(2)%v * s + t
  r1 = sum(a(3)%v)
  r2 = wsum(3, a(2)%v)
  call scale3(a(4)%v, t)
  r3 = dot_product(a(4)%v, a(1)%v)
  first = a%v(1)
  r4 = sum(a%v(2) * a%c)
  a%v(3) = a%v(1) + s
  r5 = maxval(a%v(3)) + sum(a(1)%v(2:3))
end subroutine parts

! Rank-2 array components of elements, nested structures' array
! components (`g(1)%c%v`, `g%c%v(2)`), sections of element components.
subroutine grids(s, t, r6, r7, col)
  use parts_m
  implicit none
  double precision, intent(in) :: s, t
  double precision, intent(out) :: r6, r7, col(2)
  type(grid) :: g(2)
  integer :: j
  g(1)%m = s
  g(2)%m = t
  do j = 1, 3
    g(1)%m(2, j) = s * j
    g(1)%c%v(j) = t - j
    g(2)%c%v(j) = s * t * j
  end do
  g(2)%m(1, :) = g(1)%m(2, :) * t
  r6 = sum(g(2)%m) + sum(g%m(1, 2)) + sum(g(1)%c%v)
  r7 = sum(g%c%v(2) * g%m(2, 3)) + product(g(1)%m(:, 3))
  col = g(1)%m(:, 2) + g(2)%c%v(1:2)
end subroutine grids

! Sections of arrays of structures as actual arguments (one section per
! component: contiguous ones in place, strided and reversed ones, rows of
! a rank-2 array, through copy-in / copy-out), given to assumed-shape and
! explicit-shape dummies, and a rank-2 array of structures of assumed
! shape whose type has an array component.
! adjit-test: --entry sections --set s=1.5 --set t=0.5
! adjit-test: --entry sections --set s=-0.25 --set t=2
module derived_sections_m
  implicit none
  type :: cell
    real(8) :: q(3)
    real(8) :: w
  end type
contains
  subroutine bump(c, t)
    type(cell), intent(inout) :: c(:)
    real(8), intent(in) :: t
    integer :: i
    do i = 1, size(c)
      c(i)%w = c(i)%w * t + i
      c(i)%q(2) = c(i)%q(2) + t * c(i)%w
    end do
  end subroutine bump

  subroutine scale_e(c, m, t)
    integer, intent(in) :: m
    type(cell), intent(inout) :: c(m)
    real(8), intent(in) :: t
    integer :: i
    do i = 1, m
      c(i)%q(1) = c(i)%q(1) * t * i
    end do
  end subroutine scale_e

  subroutine grid_add(g, t)
    type(cell), intent(inout) :: g(:, :)
    real(8), intent(in) :: t
    integer :: i, j
    do j = 1, size(g, 2)
      do i = 1, size(g, 1)
        g(i, j)%q(3) = g(i, j)%q(3) + t * i * j
        g(i, j)%w = g(i, j)%w * g(i, j)%q(1)
      end do
    end do
  end subroutine grid_add
end module derived_sections_m

subroutine sections(s, t, r)
  use derived_sections_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(4)
  type(cell) :: a(6), g(2, 3)
  integer :: i, j
  do i = 1, 6
    a(i)%q = [s * i, s + i, t * i]
    a(i)%w = s * i
  end do
  do j = 1, 3
    do i = 1, 2
      g(i, j)%q = [s + i, t * j, s * t]
      g(i, j)%w = i + j * s
    end do
  end do
  call bump(a(2:5), t)
  call bump(a(1:6:2), t)
  call scale_e(a(6:1:-2), 3, t)
  call grid_add(g, t)
  call bump(g(:, 2), t)
  call scale_e(g(2, :), 3, t)
  r(1) = sum(a%w)
  r(2) = sum(a%q(1)) + sum(a%q(2))
  r(3) = sum(g%w)
  r(4) = sum(g%q(3)) + sum(g%q(1)) + g(2, 3)%q(2)
end subroutine sections

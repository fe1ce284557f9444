! Whole-structure assignment between a structure and an element of an
! array of structures whose type has ALLOCATABLE components: `t = b(k)`
! and `b(k) = t` copy each component deep, an ALLOCATABLE one with the
! source's bounds (a lower bound of 0 kept), reallocated to another size,
! or released when the source's is not allocated; a rank-2 component too.
! adjit-test: --entry swap --set s=1.5 --set t=0.5
! adjit-test: --entry swap --set s=-0.25 --set t=2
subroutine swap(s, t, r, q, lo, hi, flags)
  implicit none
  type :: cell
    real(8) :: w
    real(8), allocatable :: v(:)
    real(8), allocatable :: m(:, :)
  end type cell
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(6), q(4)
  integer, intent(out) :: lo(2), hi(2), flags(4)
  type(cell) :: b(3), c
  integer :: i, j
  do i = 1, 3
    b(i)%w = i * s
    allocate(b(i)%v(0:i))
    b(i)%v = [(s * t + i * j, j = 0, i)]
  end do
  allocate(b(2)%m(2, 2))
  b(2)%m = reshape([s, t, s * t, s + t], [2, 2])
  ! A structure from an element: v with bounds 0:2, m allocated.
  c = b(2)
  lo(1) = lbound(c%v, 1)
  hi(1) = ubound(c%v, 1)
  r(1) = c%w * sum(c%v)
  q = reshape(c%m, [4]) * t
  ! An element from a structure: v reallocated from 0:3 to 0:2.
  c%v = c%v * t
  c%w = -c%w
  b(3) = c
  lo(2) = lbound(b(3)%v, 1)
  hi(2) = ubound(b(3)%v, 1)
  r(2) = b(3)%w + sum(b(3)%v)
  r(3) = b(3)%v(2) * s
  r(4) = b(3)%m(2, 1) * b(3)%m(1, 2)
  ! An element without m assigned to the structure releases c%m.
  c = b(1)
  flags(1) = merge(1, 0, allocated(c%m))
  flags(2) = size(c%v)
  r(5) = sum(c%v) * c%w
  ! ... and the structure without m to an element that has it.
  b(2) = c
  flags(3) = merge(1, 0, allocated(b(2)%m))
  flags(4) = size(b(2)%v)
  r(6) = b(2)%v(1) * t + b(1)%v(0)
end subroutine swap

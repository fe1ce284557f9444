! ALLOCATABLE arrays of structures, as a component (`type(bounds_t),
! allocatable :: box(:)`, allocated with a lower bound of 0) and as a
! local: ALLOCATE, ALLOCATED, LBOUND, SIZE, elements and component
! sections, a whole-structure deep copy keeping the bounds, DEALLOCATE.
! adjit-test: --set n=3 --set x=1,2,3
! adjit-test: --set n=4 --set x=0.5,-1,2.5,0.25
subroutine f(n, x, y, flags)
  implicit none
  type :: bounds_t
    real(8) :: lo, hi
  end type
  type :: problem_t
    real(8) :: base
    type(bounds_t), allocatable :: box(:)
  end type
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: y
  integer, intent(out) :: flags(4)
  type(problem_t) :: p, q
  type(bounds_t), allocatable :: b(:)
  integer :: i
  flags(1) = merge(1, 0, allocated(p%box))
  allocate(p%box(0:n-1))
  do i = 1, n
    p%box(i-1)%lo = x(i)
    p%box(i-1)%hi = x(i)**2
  end do
  flags(2) = lbound(p%box, 1)
  q = p
  deallocate(p%box)
  flags(3) = merge(1, 0, allocated(p%box)) + 10*size(q%box)
  allocate(b(n))
  b(:)%lo = q%box(:)%hi
  b%hi = 2
  y = sum(b%lo * b%hi) + q%box(1)%lo
  deallocate(b)
  flags(4) = merge(1, 0, allocated(b))
end subroutine

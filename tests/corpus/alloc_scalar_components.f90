! ALLOCATABLE scalar components and ALLOCATABLE derived-type scalar
! components: ALLOCATED before and after, allocation on assignment
! (`p%scale = 2*x`), ALLOCATE with default initialization of the new
! structure, `%` access at depth, an ALLOCATABLE array component of the
! allocated structure, whole-structure assignment (a deep copy, kept
! after the source's component is released), ALLOCATE with SOURCE=, and
! assignment of a whole ALLOCATABLE structure component.
! adjit-test: --set x=1.5
! adjit-test: --set x=-0.75
subroutine f(x, y, flags)
  implicit none
  type :: opts_t
    real(8) :: tol = 0.5d0
    integer :: maxit = 7
    real(8), allocatable :: w(:)
  end type
  type :: problem_t
    real(8), allocatable :: scale
    type(opts_t), allocatable :: opts
    real(8) :: base
  end type
  real(8), intent(in) :: x
  real(8), intent(out) :: y(4)
  integer, intent(out) :: flags(6)
  type(problem_t) :: p, q
  flags(1) = merge(1, 0, allocated(p%scale))
  flags(2) = merge(1, 0, allocated(p%opts))
  p%scale = 2*x
  allocate(p%opts)
  flags(3) = p%opts%maxit
  p%opts%tol = p%opts%tol * x
  allocate(p%opts%w(3))
  p%opts%w = [x, x*x, 3d0]
  p%base = x + 1
  q = p
  deallocate(p%opts)
  flags(4) = merge(1, 0, allocated(p%opts))
  flags(5) = merge(1, 0, allocated(q%opts))
  flags(6) = size(q%opts%w)
  y(1) = q%scale * q%opts%tol
  y(2) = sum(q%opts%w) * p%scale
  deallocate(q%scale)
  allocate(q%scale, source = x**3)
  y(3) = q%scale
  p%opts = q%opts
  y(4) = p%opts%w(2) + p%opts%tol
end subroutine

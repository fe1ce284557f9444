! ALLOCATABLE scalar variables: a local real allocated by assignment, a
! local structure allocated by ALLOCATE (default initialization) and one
! by assignment from it, ALLOCATE with SOURCE=, DEALLOCATE, ALLOCATED; a
! SAVE local and a module variable allocated and released in the call.
! adjit-test: --entry f --set x=1.5
! adjit-test: --entry f --set x=-2
module alloc_scalar_locals_m
  implicit none
  type :: opts_t
    real(8) :: tol = 0.5d0
    integer :: maxit = 7
  end type
  real(8), allocatable :: g
contains
  subroutine f(x, y, flags)
    real(8), intent(in) :: x
    real(8), intent(out) :: y(4)
    integer, intent(out) :: flags(6)
    real(8), allocatable :: t
    real(8), allocatable, save :: c
    type(opts_t), allocatable :: o, o2
    flags(1) = merge(1, 0, allocated(t))
    t = x * x
    flags(2) = merge(1, 0, allocated(t))
    allocate(o)
    o%tol = o%tol * t
    o2 = o
    flags(3) = merge(1, 0, allocated(o2))
    y(1) = t + o2%tol
    deallocate(t)
    allocate(t, source = 3 * x)
    y(2) = t * o%maxit
    deallocate(o)
    flags(4) = merge(1, 0, allocated(o))
    y(3) = o2%tol
    flags(5) = merge(1, 0, allocated(c))
    if (.not. allocated(c)) allocate(c)
    c = sin(x)
    g = 2 * x
    flags(6) = merge(1, 0, allocated(g))
    y(4) = c * g
    deallocate(g, c)
  end subroutine
end module

! ALLOCATABLE scalar components of structures passed to module
! procedures: an INTENT(OUT) dummy whose components the callee allocates,
! ALLOCATED tested in the callee, a structure constructor that gives one
! ALLOCATABLE component and leaves the other unallocated.
! adjit-test: --entry f --set x=1.5
! adjit-test: --entry f --set x=0.25
module prob_m
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: opts_t
    real(dp) :: tol = 0.5_dp
    integer :: maxit = 7
  end type
  type :: problem_t
    real(dp), allocatable :: scale
    type(opts_t), allocatable :: opts
    real(dp) :: base
  end type
contains
  subroutine setup(p, x)
    type(problem_t), intent(out) :: p
    real(dp), intent(in) :: x
    allocate(p%opts)
    p%scale = x
    p%opts%tol = p%opts%tol * x
  end subroutine
  real(dp) function energy(p)
    type(problem_t), intent(in) :: p
    energy = p%base
    if (allocated(p%scale)) energy = energy * p%scale
    if (allocated(p%opts)) energy = energy + p%opts%tol * p%opts%maxit
  end function
  subroutine f(x, y, flags)
    real(dp), intent(in) :: x
    real(dp), intent(out) :: y(3)
    integer, intent(out) :: flags(3)
    type(problem_t) :: p, q
    p%base = x
    y(1) = energy(p)
    call setup(p, x)
    p%base = 1
    y(2) = energy(p)
    q = problem_t(scale=x*x, base=3*x)
    flags(1) = merge(1, 0, allocated(q%opts))
    flags(2) = merge(1, 0, allocated(q%scale))
    y(3) = energy(q)
    call setup(q, y(3))
    q%base = 2
    flags(3) = q%opts%maxit
    y(3) = y(3) + energy(q)
  end subroutine
end module

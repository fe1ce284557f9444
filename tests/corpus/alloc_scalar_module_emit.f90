! ALLOCATABLE scalar module variables used by the objective through other
! procedures: a real allocated by assignment in one procedure and read in
! another, a structure allocated by ALLOCATE (default initialization) and
! released, and a module structure whose ALLOCATABLE scalar component is
! allocated by assignment.
! adjit-test: --entry f --set x=1.5
! adjit-test: --entry f --set x=-0.75
module alloc_scalar_module_emit_m
  implicit none
  type :: opts_t
    real(8) :: tol = 0.5d0
    integer :: maxit = 3
  end type
  type :: holder_t
    real(8), allocatable :: s
    real(8) :: base = 1d0
  end type
  real(8), allocatable :: w
  type(opts_t), allocatable :: o
  type(holder_t) :: h
contains
  subroutine setup(x)
    real(8), intent(in) :: x
    w = exp(x)
    if (.not. allocated(o)) allocate(o)
    o%tol = o%tol * x
    h%s = x * x
  end subroutine
  real(8) function energy(x)
    real(8), intent(in) :: x
    energy = h%base * x
    if (allocated(w)) energy = energy + w * x
    if (allocated(o)) energy = energy + o%tol * o%maxit
    if (allocated(h%s)) energy = energy + sin(h%s)
  end function
  subroutine f(x, y, flags)
    real(8), intent(in) :: x
    real(8), intent(out) :: y(2)
    integer, intent(out) :: flags(3)
    y(1) = energy(x)
    call setup(x)
    y(2) = energy(x) * y(1)
    flags(1) = merge(1, 0, allocated(w))
    flags(2) = merge(1, 0, allocated(o))
    flags(3) = merge(1, 0, allocated(h%s))
    deallocate(w, o, h%s)
  end subroutine
end module

! ALLOCATABLE scalar dummy arguments, the way a solver library hands out
! optional settings and a lazily created work value: `setup_opts`
! allocates an INTENT(OUT) ALLOCATABLE structure (deallocated on entry,
! so a caller's allocated `o` is released first), `ensure_scale` allocates
! an INTENT(INOUT) ALLOCATABLE real on first use only (ALLOCATED in the
! callee), `drop_scale` deallocates it with STAT= / ERRMSG= (twice: the
! second reports gfortran's status and message instead of failing), an
! OPTIONAL ALLOCATABLE dummy absent and present, and a dummy passed on to
! another procedure's ALLOCATABLE dummy. Derivatives flow through the
! allocated values.
! adjit-test: --entry damped_sum --set x=0.5,-1.25,2 --set lam=0.3
! adjit-test: --entry damped_sum --set x=1,2,3 --set lam=-1.1
module alloc_scalar_dummies_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type :: opts_t
    real(dp) :: damping = 0.5_dp
    integer :: maxit = 3
  end type
contains
  subroutine setup_opts(o, lam)
    type(opts_t), allocatable, intent(out) :: o
    real(dp), intent(in) :: lam
    if (allocated(o)) stop 'INTENT(OUT) did not deallocate'
    allocate(o)
    o%damping = o%damping + lam**2
  end subroutine setup_opts

  subroutine ensure_scale(s, x, created)
    real(dp), allocatable, intent(inout) :: s
    real(dp), intent(in) :: x(:)
    integer, intent(inout) :: created
    if (.not. allocated(s)) then
      allocate(s)
      s = sqrt(1 + sum(x**2))
      created = created + 1
    end if
  end subroutine ensure_scale

  ! Passes its ALLOCATABLE dummy on to another ALLOCATABLE dummy.
  subroutine rescale(s, x, created, factor)
    real(dp), allocatable, intent(inout) :: s
    real(dp), intent(in) :: x(:)
    integer, intent(inout) :: created
    real(dp), allocatable, intent(in), optional :: factor
    call ensure_scale(s, x, created)
    if (present(factor)) then
      if (allocated(factor)) s = s*factor
    end if
  end subroutine rescale

  subroutine drop_scale(s, stat, msg)
    real(dp), allocatable, intent(inout) :: s
    integer, intent(out) :: stat
    character(len=*), intent(inout) :: msg
    deallocate(s, stat=stat, errmsg=msg)
  end subroutine drop_scale

  subroutine damped_sum(x, lam, y, flags)
    real(dp), intent(in) :: x(3), lam
    real(dp), intent(out) :: y(3)
    integer, intent(out) :: flags(6)
    type(opts_t), allocatable :: o
    real(dp), allocatable :: s, f
    integer :: created, k, st
    character(len=48) :: msg
    created = 0
    allocate(o)
    o%maxit = 99
    call setup_opts(o, lam)
    flags(1) = o%maxit
    call ensure_scale(s, x, created)
    call ensure_scale(s, x, created)
    flags(2) = created
    y(1) = 0
    do k = 1, o%maxit
      y(1) = y(1) + o%damping**k*s
    end do
    call rescale(s, x, created)
    f = 1 + lam*x(2)
    call rescale(s, x, created, f)
    y(2) = s
    msg = 'unchanged'
    call drop_scale(s, st, msg)
    flags(3) = st
    flags(4) = merge(1, 0, allocated(s))
    call drop_scale(s, st, msg)
    flags(5) = st
    flags(6) = len_trim(msg)
    call rescale(s, x, created, f)
    y(3) = s*f + o%damping
    allocate(f, stat=st, errmsg=msg)
    y(3) = y(3) + st
  end subroutine damped_sum
end module alloc_scalar_dummies_m

! ALLOCATED, STAT= and MOVE_ALLOC of ALLOCATABLE module and SAVE arrays
! under a procedure called through the API: a work array allocated when
! ALLOCATED says it is not, a SAVE history allocated with STAT= (0: it is
! not allocated at the start of a call, since the previous call released
! it), moved out by MOVE_ALLOC (ALLOCATED of it is then false), and the
! work array deallocated with STAT= twice (0, then 1 as gfortran answers
! for an unallocated array). Every call starts as a Fortran program's
! next call would: the previous one released everything.
! adjit-test: --entry alloc_status --set n=4 --set x=0.5,-1.25,2,0.75
! adjit-test: --entry alloc_status --set n=3 --set x=-0.3,1.1,0.4
module alloc_status_data
  implicit none
  double precision, allocatable :: w(:)
contains
  subroutine accumulate(n, x, y, info)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: y
    integer, intent(inout) :: info(5)
    double precision, allocatable, save :: h(:)
    double precision, allocatable :: t(:)
    integer :: s
    if (.not. allocated(w)) allocate(w(n))
    w = x**2
    allocate(h(n), stat=s)
    info(1) = s
    h = sin(x) * w
    call move_alloc(h, t)
    if (allocated(h)) info(2) = 1
    if (allocated(t)) info(3) = size(t)
    y = sum(t)
    deallocate(w, stat=s)
    info(4) = s
    deallocate(w, stat=s)
    info(5) = s
  end subroutine accumulate
end module alloc_status_data

subroutine alloc_status(n, x, y, info)
  use alloc_status_data
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  integer, intent(out) :: info(5)
  info = 0
  call accumulate(n, x, y, info)
  if (allocated(w)) then
    y = y + 100
  else
    y = y + 2 * sum(x)
  end if
end subroutine alloc_status

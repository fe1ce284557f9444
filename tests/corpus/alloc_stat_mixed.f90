! ALLOCATE and DEALLOCATE naming ALLOCATABLE arrays and ALLOCATABLE
! scalars in one statement, with and without STAT= / ERRMSG=: the objects
! are handled in order and the first failure sets STAT= and ERRMSG=,
! leaving the objects after it as they were (gfortran's behaviour); the
! status of each object is reported through ALLOCATED.
! adjit-test: --entry smooth_energy --set x=0.5,1.5,-2,3 --set n=4 --set twice=0
! adjit-test: --entry smooth_energy --set x=0.5,1.5,-2,3 --set n=3 --set twice=1
module smoothing_workspace
  implicit none
  real(8), allocatable :: work(:), weight
  real(8), allocatable :: history(:)
contains
  subroutine setup(n, ierr)
    integer, intent(in) :: n
    integer, intent(out) :: ierr
    allocate(work(n), weight, history(2*n), stat=ierr)
  end subroutine

  subroutine teardown(ierr, msg)
    integer, intent(out) :: ierr
    character(len=*), intent(inout) :: msg
    deallocate(history, weight, work, stat=ierr, errmsg=msg)
  end subroutine
end module

subroutine smooth_energy(x, n, twice, e, flags)
  use smoothing_workspace
  implicit none
  real(8), intent(in) :: x(4)
  integer, intent(in) :: n, twice
  real(8), intent(out) :: e
  integer, intent(out) :: flags(8)
  real(8), allocatable :: scratch(:), scale
  character(len=48) :: msg
  integer :: i, ierr
  flags = -1
  call setup(n, ierr)
  flags(1) = ierr
  weight = 0.25d0 * x(1)
  do i = 1, n
    work(i) = x(i) * x(i) + weight
  end do
  history(1:n) = work(1:n)
  e = sum(work(1:n)) * weight
  allocate(scratch(n), scale)
  scratch = 2 * work(1:n)
  scale = x(2)
  e = e + scale * sum(scratch)
  msg = 'untouched'
  if (twice == 1) then
    ! weight is released first: the second DEALLOCATE fails on it and
    ! leaves work (named after it) allocated.
    deallocate(weight)
    deallocate(scratch, weight, scale, stat=ierr, errmsg=msg)
    flags(2) = ierr
    if (allocated(scale)) flags(3) = 1
    if (allocated(scratch)) flags(4) = 1
    if (msg /= 'untouched') flags(5) = 1
    deallocate(scale)
  else
    deallocate(scratch, scale, stat=ierr, errmsg=msg)
    flags(2) = ierr
    if (.not. allocated(scale)) flags(3) = 0
    if (.not. allocated(scratch)) flags(4) = 0
    if (msg == 'untouched') flags(5) = 0
  end if
  msg = 'untouched'
  call teardown(ierr, msg)
  flags(6) = ierr
  if (allocated(work)) flags(7) = 1
  if (allocated(history)) flags(8) = 1
  if (allocated(work)) deallocate(work)
end subroutine

! The ALLOCATABLE statement (with and without `::`, the shape given there or
! by the type declaration) and ERRMSG= with STAT= on ALLOCATE and
! DEALLOCATE: gfortran's status codes and messages.
! adjit-test: --entry alloc_stmt --set n=4 --set x=1.5
! adjit-test: --entry alloc_stmt --set n=6 --set x=-0.75
subroutine alloc_stmt(n, x, s, info, msg1, msg2)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: s
  integer, intent(out) :: info(6)
  character(len=48), intent(out) :: msg1, msg2
  double precision :: a, b(:, :)
  dimension a(:)
  allocatable :: a, c(:)
  allocatable b
  double precision :: c
  integer :: i, ierr
  msg1 = 'unchanged'
  msg2 = 'unchanged'
  allocate(a(n), b(2, 0:n), stat=ierr, errmsg=msg1)
  info(1) = ierr
  do i = 1, n
    a(i) = x * i
  end do
  b = x
  c = a(2:n) * 2
  s = sum(a) + sum(b) + sum(c)
  allocate(a(3), stat=ierr, errmsg=msg1)
  info(2) = ierr
  info(3) = size(a) * 100 + size(b) * 10 + size(c)
  deallocate(a, b, stat=ierr, errmsg=msg2)
  info(4) = ierr
  deallocate(c)
  deallocate(c, stat=ierr, errmsg=msg2)
  info(5) = ierr
  info(6) = merge(1, 0, allocated(a)) + merge(10, 0, allocated(c))
end subroutine alloc_stmt

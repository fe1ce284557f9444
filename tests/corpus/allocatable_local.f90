! ALLOCATABLE local arrays: ALLOCATE with computed bounds (several objects,
! non-default lower bounds, rank 1 to 3), SIZE / LBOUND / UBOUND, ALLOCATED,
! DEALLOCATE and reallocation with another shape in a loop, STAT=, SOURCE=,
! automatic reallocation on whole-array assignment, and deallocation at
! return (each call starts unallocated).
! adjit-test: --entry alloc_local --set n=4 --set x=1.5
! adjit-test: --entry alloc_local --set n=7 --set x=-0.25
subroutine alloc_local(n, x, s, info)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: s
  integer, intent(out) :: info(12)
  double precision, allocatable :: a(:), b(:, :), c(:), w(:, :, :)
  integer :: i, j, k, ierr
  info(1) = merge(1, 0, allocated(a))
  allocate(a(n), b(0:n-1, 2*n))
  info(2) = size(a)
  info(3) = lbound(b, 1) * 100 + ubound(b, 1)
  info(4) = size(b, 2)
  do i = 1, n
    a(i) = x * i
  end do
  do j = 1, 2 * n
    do i = 0, n - 1
      b(i, j) = a(i + 1) + j
    end do
  end do
  s = sum(a) + sum(b)
  ! Already allocated: STAT= reports it instead of failing.
  allocate(a(3), stat=ierr)
  info(5) = merge(1, 0, ierr /= 0)
  info(6) = size(a)
  ! Reallocated with another shape in a loop.
  do k = 1, 3
    deallocate(a)
    allocate(a(-k:k))
    do i = -k, k
      a(i) = x * i * i + k
    end do
    s = s + sum(a)
  end do
  info(7) = lbound(a, 1)
  deallocate(a, b)
  deallocate(a, stat=ierr)
  info(8) = merge(1, 0, ierr /= 0)
  ! Whole-array assignment allocates (and reallocates) to the value's shape.
  allocate(c(n))
  c = 2 * x
  a = c(2:n)
  info(9) = size(a)
  c = a(1:2) * 3
  info(10) = size(c) * 10 + ubound(c, 1)
  s = s + sum(a) + sum(c)
  allocate(w(2, n, 3), source=x)
  s = s + sum(w)
  info(11) = size(w)
  info(12) = merge(1, 0, allocated(w))
end subroutine alloc_local

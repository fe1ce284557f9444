! ALLOCATABLE dummy arguments (rank 1 and 2) that the callee uses without
! changing their allocation: the dummy takes the actual's bounds (LBOUND,
! UBOUND, SIZE, non-default lower bounds), ALLOCATED is true, elements and
! whole-array assignments of the same shape reach the caller, and a dummy
! is passed on to another ALLOCATABLE dummy.
! adjit-test: --entry alloc_dummy --set n=4 --set x=1.5
! adjit-test: --entry alloc_dummy --set n=6 --set x=-0.75
module alloc_dummy_m
  implicit none
contains
  subroutine scale(a, f)
    double precision, allocatable, intent(inout) :: a(:)
    double precision, intent(in) :: f
    integer :: i
    do i = lbound(a, 1), ubound(a, 1)
      a(i) = a(i) * f + i
    end do
  end subroutine scale

  subroutine fill(a, b, x, info)
    double precision, allocatable, intent(inout) :: a(:)
    double precision, allocatable :: b(:, :)
    double precision, intent(in) :: x
    integer, intent(out) :: info(6)
    integer :: i, j
    info(1) = merge(1, 0, allocated(a) .and. allocated(b))
    info(2) = lbound(a, 1) * 100 + ubound(a, 1)
    info(3) = lbound(b, 1) * 100 + ubound(b, 1)
    info(4) = lbound(b, 2) * 100 + ubound(b, 2)
    info(5) = size(b)
    do j = lbound(b, 2), ubound(b, 2)
      do i = lbound(b, 1), ubound(b, 1)
        b(i, j) = sin(x * i) + j * x
      end do
    end do
    a = x * x
    a(lbound(a, 1)) = b(lbound(b, 1), ubound(b, 2))
    call scale(a, x)
    b = b * a(ubound(a, 1))
    info(6) = size(a)
  end subroutine fill
end module alloc_dummy_m

subroutine alloc_dummy(n, x, s, y, info)
  use alloc_dummy_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: s, y(3)
  integer, intent(out) :: info(6)
  double precision, allocatable :: a(:), b(:, :)
  allocate(a(-1:n), b(0:n-1, 2:3))
  a = 0
  call fill(a, b, x, info)
  s = sum(a) + sum(b)
  y(1) = a(-1)
  y(2) = a(n) * b(0, 2)
  y(3) = b(n - 1, 3)
end subroutine alloc_dummy

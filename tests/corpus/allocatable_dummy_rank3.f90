! ALLOCATABLE dummies of rank 3 and of type LOGICAL with non-default lower
! bounds: LBOUND / UBOUND / SIZE of the actual, element updates seen by the
! caller.
! adjit-test: --entry alloc_dummy_rank3
module alloc_dummy_rank3_m
contains
  subroutine g(a, l, s)
    double precision, allocatable, intent(inout) :: a(:, :, :)
    logical, allocatable :: l(:)
    double precision, intent(out) :: s
    integer :: i
    s = lbound(a, 3) * 1000 + ubound(a, 2) * 10 + size(a, 1)
    a(1, 2, 3) = a(1, 2, 3) + 1
    do i = lbound(l, 1), ubound(l, 1)
      l(i) = mod(i, 2) == 0
    end do
  end subroutine g
end module alloc_dummy_rank3_m
subroutine alloc_dummy_rank3(s, t, k)
  use alloc_dummy_rank3_m
  double precision, intent(out) :: s, t
  integer, intent(out) :: k
  double precision, allocatable :: a(:, :, :)
  logical, allocatable :: l(:)
  allocate(a(0:2, 3, -1:3), l(-2:5))
  a = 1
  l = .false.
  call g(a, l, s)
  t = sum(a)
  k = count(l)
end subroutine alloc_dummy_rank3

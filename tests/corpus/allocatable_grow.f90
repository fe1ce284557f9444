! ALLOCATABLE arrays grown step by step, as lists are built in modern code:
! assignment of an array constructor (allocates to its size), MOVE_ALLOC of
! a larger copy into the array, reallocation on assignment inside a loop,
! and a rank-2 array allocated from computed bounds and released. The
! result s depends on x smoothly (its derivatives are checked).
! adjit-test: --entry grow --set n=5 --set x=0.75
! adjit-test: --entry grow --set n=2 --set x=-1.5
subroutine grow(n, x, s, sizes)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: s
  integer, intent(out) :: sizes(4)
  double precision, allocatable :: list(:), bigger(:), t(:, :)
  integer :: k, m
  list = [x, x * x]
  do k = 1, n
    m = size(list)
    allocate(bigger(m + 1))
    bigger(1:m) = list
    bigger(m + 1) = sin(x * k) + list(m)
    call move_alloc(bigger, list)
  end do
  sizes(1) = size(list)
  sizes(2) = merge(1, 0, allocated(bigger))
  s = sum(list * list)
  do k = 1, 3
    bigger = list(1:size(list) - 1) * x
    call move_alloc(bigger, list)
    s = s + sum(list)
  end do
  sizes(3) = size(list)
  allocate(t(0:n, -1:1))
  t = x
  t(0, :) = list(1) + list(size(list))
  s = s + sum(t * t)
  sizes(4) = lbound(t, 2) * 100 + ubound(t, 1)
  deallocate(t)
end subroutine grow

! Reallocation on assignment of an array constructor with implied DO loops,
! nested constructors and array items, which may read the target itself:
! growth in a loop (`a = [a, x]`), rotation, shrinking, an empty result.
! adjit-test: --entry alloc_ctor --set n=4 --set x=1.5
! adjit-test: --entry alloc_ctor --set n=1 --set x=-0.5
subroutine alloc_ctor(n, x, s, info)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: s
  integer, intent(out) :: info(6)
  double precision, allocatable :: a(:), b(:)
  integer :: i
  a = [(x * i, i = 1, n)]
  info(1) = size(a)
  do i = 1, 3
    a = [a, x + i]
  end do
  info(2) = size(a)
  a = [a(2:), a(1)]
  s = 0
  do i = 1, size(a)
    s = s + i * a(i)
  end do
  b = [[x, 2 * x], a(1:n), (/ (a(i) * a(i), i = 1, n) /)]
  info(3) = size(b)
  s = s + sum(b)
  b = [b(n + 1:), 3 * x]
  info(4) = size(b) * 10 + lbound(b, 1)
  s = s + sum(b)
  a = [(x, i = 1, 0)]
  info(5) = size(a)
  info(6) = merge(1, 0, allocated(a))
end subroutine alloc_ctor

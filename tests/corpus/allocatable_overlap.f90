! Reallocation on assignment of an expression reading the target through a
! section (shrinking, reversing, rank 2) or passing it whole to a function:
! the value is evaluated before the target is reallocated or changed.
! adjit-test: --entry alloc_overlap --set n=4 --set x=1,2,3,4.5
! adjit-test: --entry alloc_overlap --set n=6 --set x=0.5,-1,2,0.25,3,-2
subroutine alloc_overlap(n, x, y, info)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  integer, intent(out) :: info(4)
  double precision, allocatable :: h(:), m(:, :)
  double precision, external :: weigh
  h = x * 2
  h = h(2:n) + x(1:n-1)
  info(1) = size(h)
  y = sum(h) * 10
  h = 0.5d0 * h(n-1:1:-1)
  info(2) = size(h) * 10 + lbound(h, 1)
  y = y + h(1) * 100
  allocate(m(0:n-1, 2))
  m = 1
  m(:, 2) = x
  m = m(1:n-1, :) * 3
  info(3) = size(m, 1) * 10 + lbound(m, 1)
  info(4) = size(m)
  y = y + sum(m)
  h = x
  h = 0.5d0 * h + weigh(n, h)
  y = y + sum(h * h)
end subroutine alloc_overlap

! sum of i * a(i): reads every element of its argument.
double precision function weigh(n, a)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  integer :: i
  weigh = 0
  do i = 1, n
    weigh = weigh + i * a(i)
  end do
end function weigh

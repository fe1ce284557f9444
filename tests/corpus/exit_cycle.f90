! EXIT and CYCLE, plain and with construct names on nested loops: find the
! first row of a matrix whose positive entries sum past a threshold, skipping
! negative entries, and leave both loops from the inner one.
! adjit-test: --entry search --set m=3 --set n=4 --set a=1,-2,3,4,5,-6,-7,8,9,10,11,12 --set thresh=15
! adjit-test: --entry search --set m=2 --set n=2 --set a=-1,-2,-3,-4 --set thresh=1
subroutine search(m, n, a, thresh, row, col, total, visited)
  implicit none
  integer, intent(in) :: m, n
  double precision, intent(in) :: a(m, n), thresh
  integer, intent(out) :: row, col, visited
  double precision, intent(out) :: total
  integer :: i, j
  row = 0
  col = 0
  visited = 0
  rows: do i = 1, m
    total = 0
    cols: do j = 1, n
      visited = visited + 1
      if (a(i, j) < 0) cycle cols
      total = total + a(i, j)
      if (total > thresh) then
        row = i
        col = j
        exit rows
      end if
      if (j == n .and. total < 1) cycle rows
    end do cols
  end do rows
  do i = 1, 100
    if (i*i > visited*10) exit
    if (mod(i, 2) == 0) cycle
    total = total + 1.0d-3*i
  end do
end subroutine search

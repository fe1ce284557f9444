! DO loops whose trip count overflows the integer kind: ranges of
! 2*huge + 1 and 2**64 values, steps of huge and -huge - 1, upward and
! downward, INTEGER(4) and INTEGER(8), some left by EXIT, a step known only
! at run time. gfortran counts the trips in unsigned arithmetic; a trip
! count computed in the loop's own kind overflows and runs zero times.
! adjit-test: --entry wide --set st=1 --set x=0.5
! adjit-test: --entry wide --set st=-3 --set x=1.25
! adjit-test: --entry wide --set st=9223372036854775807 --set x=2
! adjit-test: --entry wide --set st=-9223372036854775808 --set x=-0.75
subroutine wide(st, x, y, trips, first, last)
  implicit none
  integer(8), intent(in) :: st
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  integer(8), intent(out) :: trips(8), first(8), last(8)
  integer(8) :: i, hi, lo, k
  integer :: j, hj, lj
  hi = huge(hi)
  lo = -hi - 1
  hj = huge(hj)
  lj = -hj - 1
  y = 0
  trips = 0
  first = 0
  last = 0
  ! 1: -huge .. huge (2**64 - 1 trips), left after 5.
  k = 0
  do i = -hi, hi
    k = k + 1
    if (k == 1) first(1) = i
    last(1) = i
    y = y + x*k
    if (k == 5) exit
  end do
  trips(1) = k
  ! 2: huge down to -huge - 1 by -1 (2**64 trips), left after 4.
  k = 0
  do i = hi, lo, -1
    k = k + 1
    if (k == 1) first(2) = i
    last(2) = i
    y = y*x + 1
    if (k == 4) exit
  end do
  trips(2) = k
  ! 3: a step of huge: -huge, 0, huge (3 trips).
  k = 0
  do i = -hi, hi, hi
    k = k + 1
    if (k == 1) first(3) = i
    last(3) = i
    y = y + sin(x*k)
  end do
  trips(3) = k
  ! 4: a step of -huge - 1: huge, -1 (2 trips).
  k = 0
  do i = hi, lo, lo
    k = k + 1
    if (k == 1) first(4) = i
    last(4) = i
    y = y*x
  end do
  trips(4) = k
  ! 5: INTEGER(4), -huge - 1 .. huge (2**32 trips), left after 6.
  k = 0
  do j = lj, hj
    k = k + 1
    if (k == 1) first(5) = j
    last(5) = j
    y = y + x/k
    if (k == 6) exit
  end do
  trips(5) = k
  ! 6: INTEGER(4), huge down to -huge - 1 by -huge: huge, 0, -huge.
  k = 0
  do j = hj, lj, -hj
    k = k + 1
    if (k == 1) first(6) = j
    last(6) = j
    y = y - x*x
  end do
  trips(6) = k
  ! 7 and 8: the step of the argument, upward and downward over the
  ! whole INTEGER(8) range, left after 4.
  k = 0
  do i = lo, hi, st
    k = k + 1
    if (k == 1) first(7) = i
    last(7) = i
    y = y + x**2
    if (k == 4) exit
  end do
  trips(7) = k
  k = 0
  do i = hi, lo, st
    k = k + 1
    if (k == 1) first(8) = i
    last(8) = i
    y = y*x - 1
    if (k == 4) exit
  end do
  trips(8) = k
end subroutine wide

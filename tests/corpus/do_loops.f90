! DO loop semantics: positive and negative steps, a step not dividing the
! range, zero-trip loops (the variable still gets its start value), the trip
! count fixed at loop entry although the bound variable changes inside, and
! the loop variable's value after the loop.
! adjit-test: --entry loops --set n=5 --set m=10
! adjit-test: --entry loops --set n=0 --set m=-3
subroutine loops(n, m, s, after, trips)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(out) :: s(4)
  integer, intent(out) :: after(4), trips(3)
  integer :: i, last
  s = 0
  trips = 0
  do i = 1, m, 3
    s(1) = s(1) + i*0.5d0
  end do
  after(1) = i
  do i = n, 1, -1
    s(2) = s(2) + 1.0d0/i
  end do
  after(2) = i
  do i = m, n
    s(3) = s(3) + i
    trips(1) = trips(1) + 1
  end do
  after(3) = i
  last = n
  do i = 1, last
    last = last - 1
    s(4) = s(4) + i*last
    trips(2) = trips(2) + 1
  end do
  after(4) = i
  do i = m, 1, -2
    trips(3) = trips(3) + 1
  end do
end subroutine loops

! A `dim=` that is not a constant in a DO WHILE condition and in a SELECT
! CASE selector: the condition (selector) is assigned to a temporary,
! dispatched on the value of `dim`, and evaluated again on every trip.
! adjit-test: --entry dim_while_case --set k=1 --set x=1,2,3,4,5,6
! adjit-test: --entry dim_while_case --set k=2 --set x=0.5,-1,2,0.25,3,-2
! adjit-test: --entry dim_while_case --set k=2 --set x=1,2,3,4,5,6
subroutine dim_while_case(k, x, y, trips)
  implicit none
  integer, intent(in) :: k
  double precision, intent(in) :: x(6)
  double precision, intent(out) :: y
  integer, intent(out) :: trips(2)
  double precision :: m(2, 3)
  m = reshape(x, [2, 3])
  y = 0
  trips = 0
  do while (maxval(sum(abs(m), dim=k)) > 1 .and. trips(1) < 20)
    m = 0.5d0 * m + 0.1d0 * sin(m)
    y = y + sum(m) * 0.25d0
    trips(1) = trips(1) + 1
  end do
  select case (maxloc(sum(m * m, dim=k), 1) + 3 * k)
  case (4:5)
    y = y + product(m(1, :))
    trips(2) = 1
  case (6:7)
    y = y * 2 + minval(sum(m, dim=k))
    trips(2) = 2
  case default
    y = y - maxval(sum(m, dim=k))
    trips(2) = 3
  end select
end subroutine dim_while_case

! A DIM= that is not a constant where the statement is not lowered once
! per dimension (a DO WHILE condition, evaluated at every trip) is
! rejected.
! adjit-error: 10:28: `dim=` of `sum` that is not a constant
subroutine rd(m, k, s)
  implicit none
  double precision, intent(inout) :: m(2, 3)
  integer, intent(in) :: k
  double precision, intent(out) :: s(3)
  do while (sum(sum(m, dim=k)) > 0)
    m = m - 1
  end do
  s = 0
end subroutine rd

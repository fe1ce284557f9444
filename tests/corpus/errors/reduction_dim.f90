! A DIM= that is not a constant where the statement is not lowered once
! per dimension (a DO loop's bound, evaluated once before the loop) is
! rejected.
! adjit-error: 11:32: `dim=` of `sum` that is not a constant
subroutine rd(m, k, s)
  implicit none
  double precision, intent(inout) :: m(2, 3)
  integer, intent(in) :: k
  double precision, intent(out) :: s(3)
  integer :: i
  do i = 1, int(sum(sum(m, dim=k)))
    m = m - 1
  end do
  s = 0
end subroutine rd

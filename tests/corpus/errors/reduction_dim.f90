! A reduction giving an array (DIM= of a rank-2 array) whose DIM= is not
! a constant is rejected (the rank of the result would not be known).
! adjit-error: 9:18: `dim=` of `sum` that is not a constant
subroutine rd(m, k, s)
  implicit none
  double precision, intent(in) :: m(2, 3)
  integer, intent(in) :: k
  double precision, intent(out) :: s(3)
  s = sum(m, dim=k)
end subroutine rd

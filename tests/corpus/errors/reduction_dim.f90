! An array-valued reduction (DIM= of a rank-2 array) is rejected.
! adjit-error: 7:18: dim=
subroutine rd(m, s)
  implicit none
  double precision, intent(in) :: m(2, 3)
  double precision, intent(out) :: s
  s = sum(m, dim=2)
end subroutine rd

! A FORALL assignment reading other elements of its target is rejected
! (FORALL evaluates every right-hand side before assigning).
! adjit-error: 9:27: FORALL reading other elements of `a`, which it assigns
subroutine fo(a, n)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n)
  integer :: i
  forall (i = 2:n) a(i) = a(i - 1) + 1
end subroutine fo

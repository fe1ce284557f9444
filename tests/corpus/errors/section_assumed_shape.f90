! An array section given to an assumed-shape dummy is rejected (the
! callee would see the extent of the rest of the array).
! adjit-error: 16:10: array section passed to an assumed-shape dummy
module sh
contains
  subroutine f(v)
    double precision, intent(inout) :: v(:)
    v = 2 * v
  end subroutine f
end module sh

subroutine g(a)
  use sh
  implicit none
  double precision, intent(inout) :: a(6)
  call f(a(2:4))
end subroutine g

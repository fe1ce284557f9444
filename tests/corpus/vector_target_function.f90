! An array-valued user function assigned to a target with a vector
! subscript (`y(perm) = scaled(x, c)`): the result scattered through a
! permutation, an index expression (`perm + 1`), a constructor of
! indices and the target read by the right-hand side.
! adjit-test: --entry permuted_update --set x=1,2,3,4 --set c=0.5
! adjit-test: --entry permuted_update --set x=-0.5,2.5,1,-3 --set c=2
module permuted_maps
  implicit none
contains
  function scaled(x, c) result(r)
    real(8), intent(in) :: x(:), c
    real(8) :: r(size(x))
    r = c * x + x**2
  end function
end module

subroutine permuted_update(x, c, y)
  use permuted_maps
  implicit none
  real(8), intent(in) :: x(4), c
  real(8), intent(out) :: y(6)
  integer :: perm(4)
  perm = [3, 1, 4, 2]
  y = c
  y(perm + 1) = scaled(x, y(1))
  y([6, 1]) = scaled(x(2:3), 0.5d0 * c)
  y(perm) = y(perm) + scaled(x, 1d0)
end subroutine

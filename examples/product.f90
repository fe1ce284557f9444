! The product y = x(1) * ... * x(n) (seed 000): a finite-difference
! gradient costs n evaluations of n multiplications; the adjoint one.
! adjit grad examples/product.f90 --of y --wrt x --set n=5 --set x=1,2,3,4,5
subroutine product(n, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  integer i
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine product

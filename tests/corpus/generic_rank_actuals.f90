! Generic interfaces whose specific is chosen by the rank of an array
! expression given as the actual argument: an array constructor
! (`wnorm([x(3), x(4)])`), array arithmetic (`wnorm(2*x)`,
! `wnorm(x(1:3) + x(2))`), an array-valued intrinsic
! (`wnorm(matmul(a, x(1:2)))`) and, in a CALL, a rank-2 expression picking
! the matrix specific; scalars pick the scalar specific.
! adjit-test: --entry residual_norms --set x=1,2,3,4 --set scale=0.5
! adjit-test: --entry residual_norms --set x=-0.25,1.5,2,-3 --set scale=2
module weighted_norms
  implicit none
  interface wnorm
    module procedure wnorm_scalar, wnorm_vector
  end interface
  interface accumulate
    module procedure accumulate_vector, accumulate_matrix
  end interface
contains
  pure function wnorm_scalar(x) result(r)
    real(8), intent(in) :: x
    real(8) :: r
    r = x * x
  end function

  pure function wnorm_vector(x) result(r)
    real(8), intent(in) :: x(:)
    real(8) :: r
    integer :: i
    r = 0
    do i = 1, size(x)
      r = r + i * x(i)**2
    end do
  end function

  subroutine accumulate_vector(v, total)
    real(8), intent(in) :: v(:)
    real(8), intent(inout) :: total
    total = total + sum(v**3)
  end subroutine

  subroutine accumulate_matrix(m, total)
    real(8), intent(in) :: m(:, :)
    real(8), intent(inout) :: total
    integer :: j
    do j = 1, size(m, 2)
      total = total + j * sum(m(:, j))
    end do
  end subroutine
end module

subroutine residual_norms(x, scale, r, total)
  use weighted_norms
  implicit none
  real(8), intent(in) :: x(4), scale
  real(8), intent(out) :: r(6), total
  real(8) :: a(2, 2)
  a = reshape(x, [2, 2])
  r(1) = wnorm([x(3), x(4)])
  r(2) = wnorm(x(1)) + wnorm(scale * x(2))
  r(3) = wnorm(2 * x) - wnorm(scale)
  r(4) = wnorm(x(1:3) + x(2))
  r(5) = wnorm(matmul(a, x(1:2)))
  r(6) = wnorm([x, scale * x(1)]) + wnorm(x(2:3))
  total = 0
  call accumulate(scale * x, total)
  call accumulate(a + transpose(a), total)
  call accumulate([x(4), x(1)], total)
end subroutine

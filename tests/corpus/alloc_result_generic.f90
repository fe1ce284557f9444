! Functions returning ALLOCATABLE arrays behind a generic interface (rank 1
! and rank 2 specifics), referenced in a WHERE assignment, as the argument
! of an elemental function and of SUM with DIM=.
! adjit-test: --entry smooth_field --set alpha=0.7 --set u=0.5,-1.25,2.0,0.75,-0.3,1.1
! adjit-test: --entry smooth_field --set alpha=1.3 --set u=1.5,0.25,-2.0,0.6,0.9,-0.4
module field_ops_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  interface scaled
    module procedure scaled_1d, scaled_2d
  end interface scaled
contains
  function scaled_1d(x, s) result(r)
    real(dp), intent(in) :: x(:), s
    real(dp), allocatable :: r(:)
    allocate(r(size(x)))
    r = s * x + 0.5_dp * x**2
  end function scaled_1d

  function scaled_2d(x, s) result(r)
    real(dp), intent(in) :: x(:, :), s
    real(dp), allocatable :: r(:, :)
    r = s * x
    r(1, :) = r(1, :) + 1.0_dp
  end function scaled_2d

  elemental function softclip(v, cap) result(w)
    real(dp), intent(in) :: v, cap
    real(dp) :: w
    w = cap * tanh(v / cap)
  end function softclip

  subroutine smooth_field(alpha, u, v, colsum, total)
    real(dp), intent(in) :: alpha, u(6)
    real(dp), intent(out) :: v(6), colsum(3), total
    real(dp) :: grid(2, 3)
    logical :: positive(6)
    positive = u > 0.0_dp
    v = u
    where (positive) v = scaled(u, alpha)
    v = softclip(scaled(v, 0.5_dp), 2.0_dp)
    grid = reshape(u, [2, 3])
    colsum = sum(scaled(grid, alpha), dim=1)
    total = sum(scaled(grid, 1.0_dp / alpha)) + maxval(sum(scaled(grid, alpha), dim=2))
  end subroutine smooth_field
end module field_ops_m

! A generic statistics module as numerical libraries write them: kind
! parameters from iso_fortran_env, generic interfaces (mean, variance,
! standardize) with specifics for real32 and real64 and for rank 1 and
! rank 2 (per column, DIM-like), `pure elemental` helpers (a Huber weight,
! a z-score), optional arguments (a shift for the variance, a corrected
! estimator flag) and PRIVATE specifics behind PUBLIC generic names; the
! double-precision statistics are differentiated with respect to the data.
! adjit-test: --entry summarize --set x=1.5,2.25,0.75,3.0,2.5,1.0 --set c=0.9
! adjit-test: --entry summarize --set x=-0.4,0.9,1.7,0.2,-1.1,2.6 --set c=0.8
module stats_generic
  use, intrinsic :: iso_fortran_env, only: sp => real32, dp => real64
  implicit none
  private
  public :: sp, dp, mean, variance, huber_weight, zscore, robust_center

  interface mean
    module procedure mean_sp_1, mean_dp_1, mean_dp_2
  end interface mean

  interface variance
    module procedure variance_sp_1, variance_dp_1
  end interface variance

  interface huber_weight
    module procedure huber_weight_sp, huber_weight_dp
  end interface huber_weight

contains

  pure function mean_sp_1(x) result(m)
    real(sp), intent(in) :: x(:)
    real(sp) :: m
    m = sum(x) / real(size(x), sp)
  end function mean_sp_1

  pure function mean_dp_1(x) result(m)
    real(dp), intent(in) :: x(:)
    real(dp) :: m
    m = sum(x) / real(size(x), dp)
  end function mean_dp_1

  !> Column means of a matrix.
  pure function mean_dp_2(x) result(m)
    real(dp), intent(in) :: x(:, :)
    real(dp) :: m(size(x, 2))
    integer :: j
    do j = 1, size(x, 2)
      m(j) = mean_dp_1(x(:, j))
    end do
  end function mean_dp_2

  pure function variance_sp_1(x, corrected) result(v)
    real(sp), intent(in) :: x(:)
    logical, intent(in), optional :: corrected
    real(sp) :: v
    integer :: dof
    dof = size(x)
    if (present(corrected)) then
      if (corrected) dof = dof - 1
    end if
    v = sum((x - mean_sp_1(x))**2) / real(dof, sp)
  end function variance_sp_1

  pure function variance_dp_1(x, corrected) result(v)
    real(dp), intent(in) :: x(:)
    logical, intent(in), optional :: corrected
    real(dp) :: v
    integer :: dof
    dof = size(x)
    if (present(corrected)) then
      if (corrected) dof = dof - 1
    end if
    v = sum((x - mean_dp_1(x))**2) / real(dof, dp)
  end function variance_dp_1

  elemental function huber_weight_sp(r, c) result(w)
    real(sp), intent(in) :: r, c
    real(sp) :: w
    w = min(1.0_sp, c / max(abs(r), tiny(r)))
  end function huber_weight_sp

  elemental function huber_weight_dp(r, c) result(w)
    real(dp), intent(in) :: r, c
    real(dp) :: w
    w = min(1.0_dp, c / max(abs(r), tiny(r)))
  end function huber_weight_dp

  pure elemental function zscore(x, mu, sigma) result(z)
    real(dp), intent(in) :: x, mu, sigma
    real(dp) :: z
    z = (x - mu) / sigma
  end function zscore

  !> Huber M-estimate of location: iteratively reweighted means.
  pure function robust_center(x, c, iterations) result(mu)
    real(dp), intent(in) :: x(:), c
    integer, intent(in), optional :: iterations
    real(dp) :: mu, w(size(x))
    integer :: k, n_iter
    n_iter = 5
    if (present(iterations)) n_iter = iterations
    mu = mean(x)
    do k = 1, n_iter
      w = huber_weight(x - mu, c)
      mu = sum(w * x) / sum(w)
    end do
  end function robust_center
end module stats_generic

subroutine summarize(x, c, moments, z, center, col_means, single)
  use stats_generic
  implicit none
  real(dp), intent(in) :: x(6), c
  real(dp), intent(out) :: moments(3), z(6), center, col_means(3)
  real(sp), intent(out) :: single(2)
  real(dp) :: table(2, 3)
  real(sp) :: xs(6)
  moments(1) = mean(x)
  moments(2) = variance(x)
  moments(3) = variance(x, corrected=.true.)
  z = zscore(x, moments(1), sqrt(moments(3)))
  center = robust_center(x, c, iterations=4)
  table = reshape(x, [2, 3])
  col_means = mean(table)
  xs = real(x, sp)
  single = [mean(xs), variance(xs, .true.)]
end subroutine summarize

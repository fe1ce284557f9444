! A least-squares polynomial fit the way a small library writes it: a
! module with a public driver taking optional weights and a keyword-chosen
! degree, normal equations assembled in ALLOCATABLE work arrays, solved by
! Cholesky factorization; the residual norm and the coefficients are
! differentiated with respect to the data.
! adjit-test: --entry fit_quadratic --set y=1.0,1.8,3.1,4.9,7.2,9.8 --set scale=1.0
! adjit-test: --entry fit_weighted --set y=0.5,0.9,1.6,2.2,2.4,3.3,3.9 --set w0=2.0
module lsq_fit
  implicit none
  private
  public :: polyfit, fit_quadratic, fit_weighted
  integer, parameter :: dp = kind(1.0d0)
contains

  subroutine cholesky_solve(a, b, n)
    integer, intent(in) :: n
    real(dp), intent(inout) :: a(n, n)
    real(dp), intent(inout) :: b(n)
    integer :: i, j, k
    real(dp) :: s
    do j = 1, n
      s = a(j, j) - sum(a(j, 1:j-1)**2)
      a(j, j) = sqrt(s)
      do i = j + 1, n
        s = a(i, j)
        do k = 1, j - 1
          s = s - a(i, k)*a(j, k)
        end do
        a(i, j) = s/a(j, j)
      end do
    end do
    do i = 1, n
      b(i) = (b(i) - dot_product(a(i, 1:i-1), b(1:i-1)))/a(i, i)
    end do
    do i = n, 1, -1
      b(i) = (b(i) - dot_product(a(i+1:n, i), b(i+1:n)))/a(i, i)
    end do
  end subroutine cholesky_solve

  subroutine polyfit(x, y, coef, degree, weights, rnorm)
    real(dp), intent(in) :: x(:), y(:)
    real(dp), intent(out) :: coef(:)
    integer, intent(in), optional :: degree
    real(dp), intent(in), optional :: weights(:)
    real(dp), intent(out), optional :: rnorm
    real(dp), allocatable :: v(:, :), w(:), ata(:, :), aty(:), r(:)
    integer :: m, n, j, deg
    m = size(x)
    deg = 1
    if (present(degree)) deg = degree
    n = deg + 1
    allocate(v(m, n), w(m), ata(n, n), aty(n), r(m))
    if (present(weights)) then
      w = weights
    else
      w = 1.0_dp
    end if
    v(:, 1) = 1.0_dp
    do j = 2, n
      v(:, j) = v(:, j-1)*x
    end do
    do j = 1, n
      aty(j) = sum(w*v(:, j)*y)
      ata(:, j) = matmul(transpose(v), w*v(:, j))
    end do
    call cholesky_solve(ata, aty, n)
    coef = 0.0_dp
    coef(1:n) = aty
    if (present(rnorm)) then
      r = y - matmul(v, aty)
      rnorm = sqrt(sum(w*r**2))
    end if
  end subroutine polyfit

  subroutine fit_quadratic(y, scale, c, res)
    real(dp), intent(in) :: y(6)
    real(dp), intent(in) :: scale
    real(dp), intent(out) :: c(3), res
    real(dp) :: x(6)
    integer :: i
    x = [(scale*real(i - 1, dp)/5.0_dp, i = 1, 6)]
    call polyfit(x, y, c, degree=2, rnorm=res)
  end subroutine fit_quadratic

  subroutine fit_weighted(y, w0, c, res)
    real(dp), intent(in) :: y(7)
    real(dp), intent(in) :: w0
    real(dp), intent(out) :: c(2), res
    real(dp) :: x(7), wt(7)
    integer :: i
    do i = 1, 7
      x(i) = 0.5_dp*real(i, dp)
    end do
    wt = 1.0_dp
    wt(1) = w0
    wt(7) = w0**2
    call polyfit(x, y, c, weights=wt, rnorm=res)
  end subroutine fit_weighted
end module lsq_fit

! A BFGS quasi-Newton minimiser module: an abstract interface for the
! objective and its gradient, the inverse-Hessian approximation updated
! with outer products (MATMUL, SPREAD), a backtracking line search with
! the Armijo condition and a curvature safeguard that skips the update,
! a gradient-norm stopping test (named DO, EXIT) and OPTIONAL outputs;
! the driver fits a two-parameter exponential model to data by least
! squares, and the fitted parameters are differentiated with respect to
! the data.
! adjit-test: --entry fit_decay --set obs=2.0,1.45,1.1,0.8,0.62,0.45 --set guess=1.5,0.2
! adjit-test: --entry fit_decay --set obs=1.0,0.9,0.78,0.7,0.61,0.55 --set guess=0.8,0.05
module bfgs_solver
  implicit none
  private
  integer, parameter, public :: dp = kind(1.0d0)
  public :: objective, bfgs_minimize

  abstract interface
    subroutine objective(x, f, g)
      import dp
      real(dp), intent(in) :: x(:)
      real(dp), intent(out) :: f, g(:)
    end subroutine objective
  end interface

contains

  subroutine bfgs_minimize(fun, x, f, gtol, max_iter, iterations, skipped)
    procedure(objective) :: fun
    real(dp), intent(inout) :: x(:)
    real(dp), intent(out) :: f
    real(dp), intent(in) :: gtol
    integer, intent(in) :: max_iter
    integer, intent(out), optional :: iterations, skipped
    real(dp) :: h(size(x), size(x)), g(size(x)), gnew(size(x)), p(size(x))
    real(dp) :: s(size(x)), y(size(x)), xnew(size(x)), hy(size(x))
    real(dp) :: fnew, t, sy
    integer :: it, k, i, nskip
    h = 0.0_dp
    do i = 1, size(x)
      h(i, i) = 1.0_dp
    end do
    call fun(x, f, g)
    nskip = 0
    it = 0
    newton: do k = 1, max_iter
      if (norm2(g) < gtol) exit newton
      it = k
      p = -matmul(h, g)
      t = 1.0_dp
      search: do i = 1, 40
        xnew = x + t * p
        call fun(xnew, fnew, gnew)
        if (fnew <= f + 1.0e-4_dp * t * dot_product(g, p)) exit search
        t = 0.5_dp * t
      end do search
      s = xnew - x
      y = gnew - g
      sy = dot_product(s, y)
      if (sy > 1.0e-12_dp) then
        hy = matmul(h, y)
        h = h + ((sy + dot_product(y, hy)) / sy**2) * spread(s, 2, size(x)) * spread(s, 1, size(x)) &
              - (spread(hy, 2, size(x)) * spread(s, 1, size(x)) &
                 + spread(s, 2, size(x)) * spread(hy, 1, size(x))) / sy
      else
        nskip = nskip + 1
      end if
      x = xnew
      f = fnew
      g = gnew
    end do newton
    if (present(iterations)) iterations = it
    if (present(skipped)) skipped = nskip
  end subroutine bfgs_minimize
end module bfgs_solver

module decay_fit
  use bfgs_solver
  implicit none
  real(dp) :: data_y(6) = 0.0_dp
  real(dp), parameter :: times(6) = [0.0_dp, 0.5_dp, 1.0_dp, 1.5_dp, 2.0_dp, 2.5_dp]
contains
  !> Half the squared residuals of a exp(-b t) and the gradient in (a, b).
  subroutine residual_norm(x, f, g)
    real(dp), intent(in) :: x(:)
    real(dp), intent(out) :: f, g(:)
    real(dp) :: model(6), r(6)
    model = x(1) * exp(-x(2) * times)
    r = model - data_y
    f = 0.5_dp * sum(r**2)
    g(1) = sum(r * model / x(1))
    g(2) = -sum(r * model * times)
  end subroutine residual_norm

  subroutine fit_decay(obs, guess, params, misfit, counts)
    real(dp), intent(in) :: obs(6), guess(2)
    real(dp), intent(out) :: params(2), misfit
    integer, intent(out) :: counts(2)
    data_y = obs
    params = guess
    call bfgs_minimize(residual_norm, params, misfit, 1.0e-9_dp, 6, counts(1), counts(2))
  end subroutine fit_decay
end module decay_fit

! A fit of the kept data (module fit_data) by a Gauss-Newton solver that
! takes the residual and its Jacobian as `procedure(...)` dummies: the
! procedures passed read the module arrays `setup` allocated in an
! earlier call. The data are scaled by `scale`, so the fitted amplitude
! is proportional to it and the rate does not depend on it.
module fit_solver
  implicit none
  abstract interface
    subroutine resid_fn(m, x, scale, r)
      integer, intent(in) :: m
      real(8), intent(in) :: x(2), scale
      real(8), intent(out) :: r(m)
    end subroutine resid_fn
  end interface
contains
  subroutine gauss_newton(f, jf, m, x, scale, iters)
    procedure(resid_fn) :: f, jf
    integer, intent(in) :: m, iters
    real(8), intent(inout) :: x(2)
    real(8), intent(in) :: scale
    real(8) :: r(m), j1(m), j2(m), a11, a12, a22, g1, g2, det
    integer :: it
    do it = 1, iters
      call f(m, x, scale, r)
      call jf(m, x, 1d0, j1)
      call jf(m, x, 2d0, j2)
      a11 = sum(j1 * j1)
      a12 = sum(j1 * j2)
      a22 = sum(j2 * j2)
      g1 = sum(j1 * r)
      g2 = sum(j2 * r)
      det = a11 * a22 - a12 * a12
      x(1) = x(1) - (a22 * g1 - a12 * g2) / det
      x(2) = x(2) - (a11 * g2 - a12 * g1) / det
    end do
  end subroutine gauss_newton
end module fit_solver

module fit_problem
  use fit_data, only: tdata, ydata
  implicit none
contains
  subroutine scaled_residual(m, x, scale, r)
    integer, intent(in) :: m
    real(8), intent(in) :: x(2), scale
    real(8), intent(out) :: r(m)
    r = x(1) * exp(x(2) * tdata) - scale * ydata
  end subroutine scaled_residual

  ! Column `which` (1 or 2) of the residual's Jacobian.
  subroutine jacobian_column(m, x, which, r)
    integer, intent(in) :: m
    real(8), intent(in) :: x(2), which
    real(8), intent(out) :: r(m)
    if (which < 1.5d0) then
      r = exp(x(2) * tdata)
    else
      r = x(1) * tdata * exp(x(2) * tdata)
    end if
  end subroutine jacobian_column
end module fit_problem

subroutine fit(m, scale, x)
  use fit_solver
  use fit_problem
  implicit none
  integer, intent(in) :: m
  real(8), intent(in) :: scale
  real(8), intent(out) :: x(2)
  x = [1.5d0 * scale, -0.3d0]
  call gauss_newton(scaled_residual, jacobian_column, m, x, scale, 12)
end subroutine fit

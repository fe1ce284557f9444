! A nonlinear conjugate-gradient minimiser written as a small library: an
! abstract interface for the objective (value and gradient), an options
! type with defaults, a backtracking Armijo line search, the Polak-Ribiere+
! direction update with a steepest-descent restart, optional outputs; the
! driver fits a regularised Rosenbrock valley whose shape parameters come
! in as inputs, so the minimiser's result is differentiated through a fixed
! number of iterations.
! adjit-test: --entry fit_valley --set shape=0.9,5.0 --set x0=0.2,0.5,0.4
! adjit-test: --entry fit_valley --set shape=0.7,2.5 --set x0=0.4,-0.2,1.1
module nlcg_kinds
  implicit none
  integer, parameter :: wp = selected_real_kind(15, 307)
end module nlcg_kinds

module nlcg_solver
  use nlcg_kinds
  implicit none
  private
  public :: objective_fn, nlcg_options, nlcg_minimize

  abstract interface
    subroutine objective_fn(n, x, f, g)
      import wp
      integer, intent(in) :: n
      real(wp), intent(in) :: x(n)
      real(wp), intent(out) :: f, g(n)
    end subroutine objective_fn
  end interface

  type :: nlcg_options
    integer :: max_iter = 25
    integer :: max_backtrack = 30
    real(wp) :: armijo = 1.0e-4_wp
    real(wp) :: shrink = 0.5_wp
    real(wp) :: step0 = 1.0_wp
  end type nlcg_options

contains

  !> Backtracking line search along d from x (value f0, slope g0.d < 0):
  !> the first step t = step0 * shrink**k meeting the Armijo condition.
  subroutine armijo_search(fun, n, x, f0, slope, d, opts, t, xt, ft, gt)
    procedure(objective_fn) :: fun
    integer, intent(in) :: n
    real(wp), intent(in) :: x(n), f0, slope, d(n)
    type(nlcg_options), intent(in) :: opts
    real(wp), intent(out) :: t, xt(n), ft, gt(n)
    integer :: k
    t = opts%step0
    do k = 1, opts%max_backtrack
      xt = x + t * d
      call fun(n, xt, ft, gt)
      if (ft <= f0 + opts%armijo * t * slope) return
      t = t * opts%shrink
    end do
  end subroutine armijo_search

  !> Minimises fun from x (overwritten with the last iterate).
  subroutine nlcg_minimize(fun, n, x, fmin, opts, iterations, restarts)
    procedure(objective_fn) :: fun
    integer, intent(in) :: n
    real(wp), intent(inout) :: x(n)
    real(wp), intent(out) :: fmin
    type(nlcg_options), intent(in), optional :: opts
    integer, intent(out), optional :: iterations, restarts
    type(nlcg_options) :: o
    real(wp) :: g(n), gnew(n), d(n), xt(n), f, ft, t, slope, beta
    integer :: it, nrestart
    if (present(opts)) o = opts
    call fun(n, x, f, g)
    d = -g
    nrestart = 0
    iterate: do it = 1, o%max_iter
      slope = dot_product(g, d)
      if (slope >= 0.0_wp) then
        ! Not a descent direction: restart along the steepest descent.
        d = -g
        slope = -dot_product(g, g)
        nrestart = nrestart + 1
      end if
      call armijo_search(fun, n, x, f, slope, d, o, t, xt, ft, gnew)
      x = xt
      f = ft
      beta = max(0.0_wp, dot_product(gnew, gnew - g) / dot_product(g, g))
      d = -gnew + beta * d
      g = gnew
    end do iterate
    fmin = f
    if (present(iterations)) iterations = o%max_iter
    if (present(restarts)) restarts = nrestart
  end subroutine nlcg_minimize
end module nlcg_solver

module valley_model
  use nlcg_kinds
  implicit none
  real(wp) :: curvature = 1.0_wp, stiffness = 10.0_wp
contains
  !> f = (1 - x1)^2 + stiffness (x2 - x1^2)^2 + curvature (x3 - x2)^2 / 2.
  subroutine valley(n, x, f, g)
    integer, intent(in) :: n
    real(wp), intent(in) :: x(n)
    real(wp), intent(out) :: f, g(n)
    real(wp) :: r
    r = x(2) - x(1)**2
    f = (1.0_wp - x(1))**2 + stiffness * r**2 + 0.5_wp * curvature * (x(3) - x(2))**2
    g(1) = -2.0_wp * (1.0_wp - x(1)) - 4.0_wp * stiffness * r * x(1)
    g(2) = 2.0_wp * stiffness * r - curvature * (x(3) - x(2))
    g(3) = curvature * (x(3) - x(2))
  end subroutine valley

  subroutine fit_valley(shape, x0, xmin, fmin, counts)
    use nlcg_solver
    real(wp), intent(in) :: shape(2), x0(3)
    real(wp), intent(out) :: xmin(3), fmin
    integer, intent(out) :: counts(2)
    type(nlcg_options) :: opts
    curvature = shape(1)
    stiffness = shape(2)
    opts%max_iter = 6
    opts%step0 = 0.25_wp
    xmin = x0
    call nlcg_minimize(valley, 3, xmin, fmin, opts, iterations=counts(1), restarts=counts(2))
  end subroutine fit_valley
end module valley_model

! A solver-style module: Newton's method for a 2x2 nonlinear system, with
! its options and statistics in derived types (component defaults), optional
! arguments (initial guess, options) and keyword calls; differentiated with
! respect to the problem's parameters p through the iterations.
! adjit-test: --entry solve_problem --set p=1.5,0.25
! adjit-test: --entry solve_problem --set p=0.8,-0.5
module newton_m
  use, intrinsic :: iso_fortran_env, only: wp => real64
  implicit none
  private
  public :: wp, options, stats, newton

  type :: options
    real(wp) :: tol = 1.0e-13_wp
    integer :: max_iter = 50
    real(wp) :: damping = 1.0_wp
  end type options

  type :: stats
    integer :: iterations = 0
    logical :: converged = .false.
    real(wp) :: residual = 0.0_wp
  end type stats

contains

  ! F(x; p) = 0 with F1 = x1**2 + p1*x2 - 2, F2 = sin(x1) + x2**3 - p2.
  subroutine residual(x, p, f, jac)
    real(wp), intent(in) :: x(2), p(2)
    real(wp), intent(out) :: f(2), jac(2, 2)
    f(1) = x(1)**2 + p(1)*x(2) - 2.0_wp
    f(2) = sin(x(1)) + x(2)**3 - p(2)
    jac(1, 1) = 2*x(1)
    jac(1, 2) = p(1)
    jac(2, 1) = cos(x(1))
    jac(2, 2) = 3*x(2)**2
  end subroutine residual

  subroutine newton(x, p, st, opts, x0)
    real(wp), intent(out) :: x(2)
    real(wp), intent(in) :: p(2)
    type(stats), intent(out) :: st
    type(options), intent(in), optional :: opts
    real(wp), intent(in), optional :: x0(2)
    type(options) :: o
    real(wp) :: f(2), jac(2, 2), det, dx(2)
    integer :: it
    if (present(x0)) then
      x = x0
    else
      x = [1.0_wp, 0.5_wp]
    end if
    o = options()
    if (present(opts)) o = opts
    do it = 1, o%max_iter
      call residual(x, p, f, jac)
      st%residual = sqrt(f(1)**2 + f(2)**2)
      st%iterations = it
      if (st%residual < o%tol) then
        st%converged = .true.
        exit
      end if
      det = jac(1, 1)*jac(2, 2) - jac(1, 2)*jac(2, 1)
      dx(1) = (jac(2, 2)*f(1) - jac(1, 2)*f(2))/det
      dx(2) = (jac(1, 1)*f(2) - jac(2, 1)*f(1))/det
      x = x - o%damping*dx
    end do
  end subroutine newton
end module newton_m

subroutine solve_problem(p, x, y, iters, ok)
  use newton_m
  implicit none
  real(wp), intent(in) :: p(2)
  real(wp), intent(out) :: x(2), y(2)
  integer, intent(out) :: iters
  logical, intent(out) :: ok
  type(options) :: opts
  type(stats) :: st1, st2
  real(wp) :: guess(2)
  opts%max_iter = 100
  call newton(x, p, st1, opts=opts)
  guess = [1.2_wp, 0.4_wp]
  call newton(y, p, st2, x0=guess, opts=options(tol=1.0e-12_wp, damping=1.0_wp))
  iters = st1%iterations + 100*st2%iterations
  ok = st1%converged .and. st2%converged
end subroutine solve_problem

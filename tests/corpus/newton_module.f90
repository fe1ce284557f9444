! A solver-style module (issue 12's "done means"): Newton's method for
! F(x; p) = 0 in a module, taking the residual and its Jacobian through
! abstract-interface procedure dummies, with derived-type options whose
! components have defaults, OPTIONAL arguments (options in, iteration count
! out), ALLOCATABLE work arrays sized by the problem (allocated by ALLOCATE,
! or on assignment), a Gaussian elimination helper and a problem with
! parameters p passed as an assumed-shape array. Differentiated with respect
! to p: the root's derivative is the implicit function theorem's
! (tests/modern.rs checks it against the closed form).
! adjit-test: --entry circle_line --set p=2,0.5
! adjit-test: --entry circle_line --set p=5,-1.25
module newton_solver
  implicit none
  private
  public :: wp, residual, jacobian, options, newton
  integer, parameter :: wp = kind(1.0d0)
  abstract interface
    subroutine residual(n, x, p, f)
      import :: wp
      integer, intent(in) :: n
      real(wp), intent(in) :: x(n), p(:)
      real(wp), intent(out) :: f(n)
    end subroutine residual
    subroutine jacobian(n, x, p, j)
      import :: wp
      integer, intent(in) :: n
      real(wp), intent(in) :: x(n), p(:)
      real(wp), intent(out) :: j(n, n)
    end subroutine jacobian
  end interface
  type options
    real(wp) :: tol = 1.0e-13_wp
    integer :: max_iter = 40
    real(wp) :: damping = 1
  end type options
contains
  subroutine newton(f, df, n, x, p, opts, iters)
    procedure(residual) :: f
    procedure(jacobian) :: df
    integer, intent(in) :: n
    real(wp), intent(inout) :: x(n)
    real(wp), intent(in) :: p(:)
    type(options), intent(in), optional :: opts
    integer, intent(out), optional :: iters
    type(options) :: o
    real(wp), allocatable :: fx(:), jx(:, :), dx(:)
    integer :: it
    if (present(opts)) o = opts
    allocate(fx(n), jx(n, n), dx(n))
    do it = 1, o%max_iter
      call f(n, x, p, fx)
      call df(n, x, p, jx)
      call gauss(n, jx, fx, dx)
      x = x - o%damping * dx
      if (maxval(abs(dx)) <= o%tol * (1 + maxval(abs(x)))) exit
    end do
    if (present(iters)) iters = min(it, o%max_iter)
  end subroutine newton

  ! Solves a x = b by Gaussian elimination with partial pivoting (a and b
  ! are copied: the caller's stay as they were).
  subroutine gauss(n, a, b, x)
    integer, intent(in) :: n
    real(wp), intent(in) :: a(n, n), b(n)
    real(wp), intent(out) :: x(n)
    real(wp), allocatable :: m(:, :), r(:)
    real(wp) :: t
    integer :: i, j, k, piv
    m = a
    r = b
    do k = 1, n
      piv = k
      do i = k + 1, n
        if (abs(m(i, k)) > abs(m(piv, k))) piv = i
      end do
      if (piv /= k) then
        do i = 1, n
          t = m(k, i)
          m(k, i) = m(piv, i)
          m(piv, i) = t
        end do
        t = r(k)
        r(k) = r(piv)
        r(piv) = t
      end if
      do i = k + 1, n
        t = m(i, k) / m(k, k)
        do j = k, n
          m(i, j) = m(i, j) - t * m(k, j)
        end do
        r(i) = r(i) - t * r(k)
      end do
    end do
    do k = n, 1, -1
      x(k) = (r(k) - sum(m(k, k+1:n) * x(k+1:n))) / m(k, k)
    end do
  end subroutine gauss
end module newton_solver

module circle_problem
  use newton_solver, only: wp
  implicit none
contains
  ! x1^2 + x2^2 = p1 (a circle), x1 = p2 x2 (a line through the origin).
  subroutine resid(n, x, p, f)
    integer, intent(in) :: n
    real(wp), intent(in) :: x(n), p(:)
    real(wp), intent(out) :: f(n)
    f(1) = x(1)**2 + x(2)**2 - p(1)
    f(2) = x(1) - p(2) * x(2)
  end subroutine resid
  subroutine jac(n, x, p, j)
    integer, intent(in) :: n
    real(wp), intent(in) :: x(n), p(:)
    real(wp), intent(out) :: j(n, n)
    j(1, 1) = 2 * x(1)
    j(1, 2) = 2 * x(2)
    j(2, 1) = 1
    j(2, 2) = -p(2)
  end subroutine jac
end module circle_problem

subroutine circle_line(p, x, y, iters, iters_default)
  use newton_solver
  use circle_problem
  implicit none
  real(wp), intent(in) :: p(2)
  real(wp), intent(out) :: x(2), y(2)
  integer, intent(out) :: iters, iters_default
  x = [1.0_wp, 1.0_wp]
  call newton(resid, jac, 2, x, p, options(tol=1.0e-14_wp, max_iter=60), iters)
  y = [0.5_wp, 2.0_wp]
  call newton(resid, jac, 2, y, p, iters=iters_default)
end subroutine circle_line

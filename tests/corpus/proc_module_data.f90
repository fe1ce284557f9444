! ALLOCATABLE module data read by the procedures a solver calls through
! its dummy procedures: a module Gauss-Newton solver takes the residual
! and its Jacobian as `procedure(resid_fn)` and `procedure(jac_fn)`
! dummies and passes them on to its step routine; the problem module's
! residual reads the module arrays t and y and a SAVE ALLOCATABLE
! weight array it allocates on first use; an internal residual (reading a
! host variable and the module data) is passed for the same dummy. With
! noise = 0 the fit is exact: a = 2, b = p.
! adjit-test: --entry fit_module_data --set n=6 --set p=0.7 --set noise=0
! adjit-test: --entry fit_module_data --set n=9 --set p=-0.4 --set noise=0.01
module pmd_data
  implicit none
  integer, parameter :: wp = kind(1.0d0)
  real(wp), allocatable :: t(:), y(:)
end module pmd_data

module pmd_solver
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  abstract interface
    subroutine resid_fn(m, x, r)
      import :: dp
      integer, intent(in) :: m
      real(dp), intent(in) :: x(2)
      real(dp), intent(out) :: r(m)
    end subroutine resid_fn
    subroutine jac_fn(m, x, jac)
      import :: dp
      integer, intent(in) :: m
      real(dp), intent(in) :: x(2)
      real(dp), intent(out) :: jac(m, 2)
    end subroutine jac_fn
  end interface
contains
  subroutine gn_step(f, jf, m, x)
    procedure(resid_fn) :: f
    procedure(jac_fn) :: jf
    integer, intent(in) :: m
    real(dp), intent(inout) :: x(2)
    real(dp) :: r(m), jac(m, 2), a(2, 2), g(2), det
    call f(m, x, r)
    call jf(m, x, jac)
    a = matmul(transpose(jac), jac)
    g = matmul(transpose(jac), r)
    det = a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1)
    x(1) = x(1) - (a(2, 2) * g(1) - a(1, 2) * g(2)) / det
    x(2) = x(2) - (a(1, 1) * g(2) - a(2, 1) * g(1)) / det
  end subroutine gn_step

  subroutine gauss_newton(f, jf, m, x, iters, cost)
    procedure(resid_fn) :: f
    procedure(jac_fn) :: jf
    integer, intent(in) :: m, iters
    real(dp), intent(inout) :: x(2)
    real(dp), intent(out) :: cost
    real(dp) :: r(m)
    integer :: it
    do it = 1, iters
      call gn_step(f, jf, m, x)
    end do
    call f(m, x, r)
    cost = 0.5_dp * sum(r**2)
  end subroutine gauss_newton
end module pmd_solver

module pmd_problem
  use pmd_data
  implicit none
contains
  subroutine resid(m, x, r)
    integer, intent(in) :: m
    real(wp), intent(in) :: x(2)
    real(wp), intent(out) :: r(m)
    real(wp), allocatable, save :: wt(:)
    if (allocated(wt)) then
      if (size(wt) /= m) deallocate(wt)
    end if
    if (.not. allocated(wt)) then
      allocate(wt(m))
      wt = 1
    end if
    r = wt * (x(1) * exp(x(2) * t) - y)
  end subroutine resid

  subroutine jacobian(m, x, jac)
    integer, intent(in) :: m
    real(wp), intent(in) :: x(2)
    real(wp), intent(out) :: jac(m, 2)
    jac(:, 1) = exp(x(2) * t)
    jac(:, 2) = x(1) * t * exp(x(2) * t)
  end subroutine jacobian
end module pmd_problem

subroutine fit_module_data(n, p, noise, a, b, cost, a2, b2)
  use pmd_data
  use pmd_problem
  use pmd_solver
  implicit none
  integer, intent(in) :: n
  real(wp), intent(in) :: p, noise
  real(wp), intent(out) :: a, b, cost, a2, b2
  real(wp) :: x(2), shift, c2
  integer :: i
  allocate(t(n), y(n))
  do i = 1, n
    t(i) = real(i - 1, wp) / n
    y(i) = 2 * exp(p * t(i)) + noise * sin(real(3 * i, wp))
  end do
  x = [1.5_wp, 0.5_wp * p]
  call gauss_newton(resid, jacobian, n, x, 10, cost)
  a = x(1)
  b = x(2)
  ! The same data shifted by a host variable, through internal procedures.
  shift = 0.5_wp
  x = [1.0_wp, 0.0_wp]
  call gauss_newton(shifted, jacobian, n, x, 10, c2)
  a2 = x(1)
  b2 = x(2)
  deallocate(t, y)
contains
  subroutine shifted(m, x, r)
    integer, intent(in) :: m
    real(wp), intent(in) :: x(2)
    real(wp), intent(out) :: r(m)
    r = x(1) * exp(x(2) * t) - (y + shift * exp(p * t))
  end subroutine shifted
end subroutine fit_module_data

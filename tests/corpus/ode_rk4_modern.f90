! An fpm-style ODE package: a kinds module, an abstract interface for the
! right-hand side, a classical RK4 integrator taking a procedure(rhs_fn)
! dummy, and a model module (damped pendulum and Lotka-Volterra) whose
! parameters live in a derived type; the final state is differentiated
! with respect to the initial state and a parameter.
! adjit-test: --entry solve_pendulum --set y0=0.8,0.0 --set damping=0.15 --set t_end=2.0
! adjit-test: --entry solve_predator --set y0=1.2,0.7 --set alpha=0.9 --set t_end=1.5
module ode_kinds
  implicit none
  private
  integer, parameter, public :: wp = selected_real_kind(15, 307)
end module ode_kinds

module ode_rk4
  use ode_kinds, only: wp
  implicit none
  private
  public :: rhs_fn, rk4_step, rk4_integrate

  abstract interface
    subroutine rhs_fn(t, y, p, dydt)
      import :: wp
      real(wp), intent(in) :: t
      real(wp), intent(in) :: y(:)
      real(wp), intent(in) :: p(:)
      real(wp), intent(out) :: dydt(:)
    end subroutine rhs_fn
  end interface

contains

  subroutine rk4_step(f, t, h, y, p)
    procedure(rhs_fn) :: f
    real(wp), intent(in) :: t, h
    real(wp), intent(inout) :: y(:)
    real(wp), intent(in) :: p(:)
    real(wp), allocatable :: k1(:), k2(:), k3(:), k4(:)
    integer :: n
    n = size(y)
    allocate(k1(n), k2(n), k3(n), k4(n))
    call f(t, y, p, k1)
    call f(t + 0.5_wp*h, y + 0.5_wp*h*k1, p, k2)
    call f(t + 0.5_wp*h, y + 0.5_wp*h*k2, p, k3)
    call f(t + h, y + h*k3, p, k4)
    y = y + h*(k1 + 2.0_wp*k2 + 2.0_wp*k3 + k4)/6.0_wp
    deallocate(k1, k2, k3, k4)
  end subroutine rk4_step

  subroutine rk4_integrate(f, t0, t1, y, p, nsteps)
    procedure(rhs_fn) :: f
    real(wp), intent(in) :: t0, t1
    real(wp), intent(inout) :: y(:)
    real(wp), intent(in) :: p(:)
    integer, intent(in), optional :: nsteps
    integer :: i, n
    real(wp) :: h, t
    n = 50
    if (present(nsteps)) n = nsteps
    h = (t1 - t0)/real(n, wp)
    t = t0
    do i = 1, n
      call rk4_step(f, t, h, y, p)
      t = t + h
    end do
  end subroutine rk4_integrate
end module ode_rk4

module ode_models
  use ode_kinds, only: wp
  use ode_rk4, only: rk4_integrate
  implicit none
  private
  public :: solve_pendulum, solve_predator

  type :: pendulum_t
    real(wp) :: g = 9.81_wp
    real(wp) :: length = 1.0_wp
    real(wp) :: damping = 0.0_wp
  end type pendulum_t

contains

  subroutine pendulum(t, y, p, dydt)
    real(wp), intent(in) :: t
    real(wp), intent(in) :: y(:)
    real(wp), intent(in) :: p(:)
    real(wp), intent(out) :: dydt(:)
    dydt(1) = y(2)
    dydt(2) = -p(1)/p(2)*sin(y(1)) - p(3)*y(2) + 0.0_wp*t
  end subroutine pendulum

  subroutine lotka_volterra(t, y, p, dydt)
    real(wp), intent(in) :: t
    real(wp), intent(in) :: y(:)
    real(wp), intent(in) :: p(:)
    real(wp), intent(out) :: dydt(:)
    dydt(1) = p(1)*y(1) - p(2)*y(1)*y(2)
    dydt(2) = -p(3)*y(2) + p(4)*y(1)*y(2) + 0.0_wp*t
  end subroutine lotka_volterra

  subroutine solve_pendulum(y0, damping, t_end, energy)
    real(wp), intent(inout) :: y0(2)
    real(wp), intent(in) :: damping, t_end
    real(wp), intent(out) :: energy
    type(pendulum_t) :: pend
    real(wp) :: par(3)
    pend%damping = damping
    par = [pend%g, pend%length, pend%damping]
    call rk4_integrate(pendulum, 0.0_wp, t_end, y0, par, nsteps=40)
    energy = 0.5_wp*pend%length**2*y0(2)**2 + pend%g*pend%length*(1.0_wp - cos(y0(1)))
  end subroutine solve_pendulum

  subroutine solve_predator(y0, alpha, t_end, total)
    real(wp), intent(inout) :: y0(2)
    real(wp), intent(in) :: alpha, t_end
    real(wp), intent(out) :: total
    real(wp), parameter :: rates(3) = [0.4_wp, 0.8_wp, 0.3_wp]
    call rk4_integrate(lotka_volterra, 0.0_wp, t_end, y0, [alpha, rates])
    total = sum(y0)
  end subroutine solve_predator
end module ode_models

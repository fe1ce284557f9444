! An adaptive Runge-Kutta-Fehlberg 4(5) integrator: the Butcher tableau as
! PARAMETER arrays, a derived-type integrator state (time, solution, step,
! counters), a right-hand side through an abstract interface, the
! embedded error estimate scaled by absolute and relative tolerances, step
! acceptance or rejection with a safety factor and growth limits, and a
! last step clipped to the end time; the Van der Pol oscillator's final
! state is differentiated with respect to its parameter and initial state.
! adjit-test: --entry van_der_pol --set mu=0.8 --set y0=2.0,0.0 --set t_end=1.5
! adjit-test: --entry van_der_pol --set mu=1.6 --set y0=0.5,-1.0 --set t_end=2.5
module rkf45_integrator
  implicit none
  private
  integer, parameter, public :: wp = kind(1.0d0)
  integer, parameter, public :: neq_max = 4

  abstract interface
    subroutine rhs_fn(t, y, dydt)
      import wp
      real(wp), intent(in) :: t, y(:)
      real(wp), intent(out) :: dydt(:)
    end subroutine rhs_fn
  end interface
  public :: rhs_fn

  type, public :: rk_state
    real(wp) :: t = 0.0_wp
    real(wp) :: h = 0.1_wp
    real(wp) :: y(neq_max) = 0.0_wp
    integer :: neq = 0
    integer :: accepted = 0
    integer :: rejected = 0
  end type rk_state

  ! Fehlberg's coefficients: nodes, stage weights, 4th and 5th order.
  real(wp), parameter :: c(6) = [0.0_wp, 0.25_wp, 0.375_wp, 12.0_wp / 13.0_wp, 1.0_wp, 0.5_wp]
  real(wp), parameter :: b4(6) = [25.0_wp / 216.0_wp, 0.0_wp, 1408.0_wp / 2565.0_wp, &
                                   2197.0_wp / 4104.0_wp, -0.2_wp, 0.0_wp]
  real(wp), parameter :: b5(6) = [16.0_wp / 135.0_wp, 0.0_wp, 6656.0_wp / 12825.0_wp, &
                                   28561.0_wp / 56430.0_wp, -0.18_wp, 2.0_wp / 55.0_wp]
  real(wp), parameter :: a(6, 5) = reshape([ &
      0.0_wp, 0.25_wp, 3.0_wp / 32.0_wp, 1932.0_wp / 2197.0_wp, 439.0_wp / 216.0_wp, -8.0_wp / 27.0_wp, &
      0.0_wp, 0.0_wp, 9.0_wp / 32.0_wp, -7200.0_wp / 2197.0_wp, -8.0_wp, 2.0_wp, &
      0.0_wp, 0.0_wp, 0.0_wp, 7296.0_wp / 2197.0_wp, 3680.0_wp / 513.0_wp, -3544.0_wp / 2565.0_wp, &
      0.0_wp, 0.0_wp, 0.0_wp, 0.0_wp, -845.0_wp / 4104.0_wp, 1859.0_wp / 4104.0_wp, &
      0.0_wp, 0.0_wp, 0.0_wp, 0.0_wp, 0.0_wp, -11.0_wp / 40.0_wp], [6, 5])

  public :: rkf45_step, rkf45_integrate

contains

  !> One trial step of size s%h: the 5th-order solution and the scaled
  !> error norm (accepted when at most 1).
  subroutine rkf45_step(f, s, atol, rtol, ynew, err)
    procedure(rhs_fn) :: f
    type(rk_state), intent(in) :: s
    real(wp), intent(in) :: atol, rtol
    real(wp), intent(out) :: ynew(:), err
    real(wp) :: k(s%neq, 6), ytmp(s%neq), scale(s%neq)
    integer :: i, j
    associate (n => s%neq, h => s%h)
      do i = 1, 6
        ytmp = s%y(1:n)
        do j = 1, i - 1
          ytmp = ytmp + h * a(i, j) * k(:, j)
        end do
        call f(s%t + c(i) * h, ytmp, k(:, i))
      end do
      ynew = s%y(1:n) + h * matmul(k, b5)
      ytmp = s%y(1:n) + h * matmul(k, b4)
      scale = atol + rtol * max(abs(s%y(1:n)), abs(ynew))
      err = sqrt(sum(((ynew - ytmp) / scale)**2) / n)
    end associate
  end subroutine rkf45_step

  !> Integrates from s%t to t_end, adapting the step.
  subroutine rkf45_integrate(f, s, t_end, atol, rtol, max_steps)
    procedure(rhs_fn) :: f
    type(rk_state), intent(inout) :: s
    real(wp), intent(in) :: t_end, atol, rtol
    integer, intent(in), optional :: max_steps
    real(wp), parameter :: safety = 0.9_wp, grow_max = 4.0_wp, shrink_min = 0.2_wp
    real(wp) :: ynew(s%neq), err, factor
    integer :: step, limit
    limit = 500
    if (present(max_steps)) limit = max_steps
    steps: do step = 1, limit
      if (s%t >= t_end) exit steps
      s%h = min(s%h, t_end - s%t)
      call rkf45_step(f, s, atol, rtol, ynew, err)
      if (err <= 1.0_wp) then
        s%t = s%t + s%h
        s%y(1:s%neq) = ynew
        s%accepted = s%accepted + 1
      else
        s%rejected = s%rejected + 1
      end if
      factor = safety * max(err, 1.0e-10_wp)**(-0.2_wp)
      s%h = s%h * min(grow_max, max(shrink_min, factor))
    end do steps
  end subroutine rkf45_integrate
end module rkf45_integrator

module van_der_pol_model
  use rkf45_integrator
  implicit none
  real(wp) :: damping = 1.0_wp
contains
  subroutine vdp_rhs(t, y, dydt)
    real(wp), intent(in) :: t, y(:)
    real(wp), intent(out) :: dydt(:)
    dydt(1) = y(2)
    dydt(2) = damping * (1.0_wp - y(1)**2) * y(2) - y(1) + 0.0_wp * t
  end subroutine vdp_rhs

  subroutine van_der_pol(mu, y0, t_end, y, counts)
    real(wp), intent(in) :: mu, y0(2), t_end
    real(wp), intent(out) :: y(2)
    integer, intent(out) :: counts(2)
    type(rk_state) :: state
    damping = mu
    state%neq = 2
    state%y(1:2) = y0
    state%h = 0.05_wp
    call rkf45_integrate(vdp_rhs, state, t_end, 1.0e-6_wp, 1.0e-6_wp)
    y = state%y(1:2)
    counts = [state%accepted, state%rejected]
  end subroutine van_der_pol
end module van_der_pol_model

! A fixed-step Runge-Kutta integrator module in the style of modern
! Fortran ODE libraries (jacobwilliams/rklib, ODEPACK's drivers): kinds
! from iso_fortran_env, a derived-type options record with defaults,
! an abstract interface for the right-hand side given as
! `procedure(deriv_func)`, ALLOCATABLE stage arrays sized from the state,
! OPTIONAL arguments with keywords, a generic interface, and the
! classic 4th-order and Ralston 3rd-order tableaux as array PARAMETERs.
! The Lotka-Volterra populations at the final time are differentiated
! with respect to the initial state and the model's rates.
! adjit-test: --entry predator_prey --set y0=10,5 --set rates=1.1,0.4,0.1,0.4 --set tf=2 --set nsteps=40 --set method=4
! adjit-test: --entry predator_prey --set y0=4,9 --set rates=0.7,0.3,0.2,0.5 --set tf=1.5 --set nsteps=25 --set method=3
module rk_module
    use iso_fortran_env, only: wp => real64, ip => int32
    implicit none
    private

    type, public :: rk_options
        integer(ip) :: order = 4
        real(wp) :: t0 = 0.0_wp
        logical :: report = .false.
    end type rk_options

    abstract interface
        subroutine deriv_func(n, t, y, dydt)
            import :: wp, ip
            integer(ip), intent(in) :: n
            real(wp), intent(in) :: t
            real(wp), dimension(n), intent(in) :: y
            real(wp), dimension(n), intent(out) :: dydt
        end subroutine deriv_func
    end interface
    public :: deriv_func

    interface integrate
        module procedure integrate_fixed
    end interface integrate
    public :: integrate

    real(wp), dimension(3), parameter :: ralston_b = [2.0_wp/9.0_wp, &
        1.0_wp/3.0_wp, 4.0_wp/9.0_wp]

contains

    subroutine integrate_fixed(f, n, y, tf, nsteps, opts, nfev)
        procedure(deriv_func) :: f
        integer(ip), intent(in) :: n
        real(wp), dimension(n), intent(inout) :: y
        real(wp), intent(in) :: tf
        integer(ip), intent(in) :: nsteps
        type(rk_options), intent(in), optional :: opts
        integer(ip), intent(out), optional :: nfev

        type(rk_options) :: o
        real(wp), dimension(:), allocatable :: k1, k2, k3, k4, ytmp
        real(wp) :: h, t
        integer(ip) :: i, calls

        if (present(opts)) o = opts
        allocate(k1(n), k2(n), k3(n), k4(n))
        allocate(ytmp(n))
        h = (tf - o%t0)/real(nsteps, wp)
        t = o%t0
        calls = 0
        do i = 1, nsteps
            select case (o%order)
            case (3)
                call f(n, t, y, k1)
                ytmp = y + 0.5_wp*h*k1
                call f(n, t + 0.5_wp*h, ytmp, k2)
                ytmp = y + 0.75_wp*h*k2
                call f(n, t + 0.75_wp*h, ytmp, k3)
                y = y + h*(ralston_b(1)*k1 + ralston_b(2)*k2 + ralston_b(3)*k3)
                calls = calls + 3
            case default
                call f(n, t, y, k1)
                ytmp = y + 0.5_wp*h*k1
                call f(n, t + 0.5_wp*h, ytmp, k2)
                ytmp = y + 0.5_wp*h*k2
                call f(n, t + 0.5_wp*h, ytmp, k3)
                ytmp = y + h*k3
                call f(n, t + h, ytmp, k4)
                y = y + (h/6.0_wp)*(k1 + 2.0_wp*(k2 + k3) + k4)
                calls = calls + 4
            end select
            t = t + h
        end do
        deallocate(k1, k2, k3, k4, ytmp)
        if (present(nfev)) nfev = calls
    end subroutine integrate_fixed

end module rk_module

module lotka_volterra
    use iso_fortran_env, only: wp => real64, ip => int32
    implicit none
    real(wp) :: alpha, beta, gamma, delta
contains
    subroutine lv_rhs(n, t, y, dydt)
        integer(ip), intent(in) :: n
        real(wp), intent(in) :: t
        real(wp), dimension(n), intent(in) :: y
        real(wp), dimension(n), intent(out) :: dydt
        dydt(1) = alpha*y(1) - beta*y(1)*y(2)
        dydt(2) = delta*y(1)*y(2) - gamma*y(2)
    end subroutine lv_rhs
end module lotka_volterra

subroutine predator_prey(y0, rates, tf, nsteps, method, y, nfev)
    use iso_fortran_env, only: wp => real64
    use rk_module, only: integrate, rk_options
    use lotka_volterra
    implicit none
    real(wp), intent(in) :: y0(2), rates(4), tf
    integer, intent(in) :: nsteps, method
    real(wp), intent(out) :: y(2)
    integer, intent(out) :: nfev
    type(rk_options) :: opts
    alpha = rates(1)
    beta = rates(2)
    gamma = rates(3)
    delta = rates(4)
    opts = rk_options(order=method)
    y = y0
    call integrate(lv_rhs, 2, y, tf, nsteps, opts=opts, nfev=nfev)
end subroutine predator_prey

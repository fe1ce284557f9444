! The heat equation u_t = kappa u_xx on [0, 1] by Crank-Nicolson, as a
! small modern solver module writes it: kinds from iso_fortran_env, a
! derived-type grid, ASSOCIATE with an expression selector for the
! coefficients, array sections with overlapping right-hand sides
! (u(2:n-1) from u(1:n-2), u(2:n-1), u(3:n)), DO CONCURRENT, a BLOCK with
! its own work arrays, the Thomas algorithm in a PURE subroutine, a
! named DO with EXIT at a steady state, and ERROR STOP on bad input.
! The final temperatures are differentiated with respect to the initial
! profile, the diffusivity and the boundary temperatures.
! adjit-test: --entry heat --set u=0,0.2,0.5,0.9,1,0.7,0.4,0.1 --set kappa=0.8 --set left=0 --set right=0.25 --set nsteps=20 --set dt=0.01
! adjit-test: --entry heat --set u=1,1,1,0,0,0,1,1 --set kappa=2.5 --set left=1 --set right=1 --set nsteps=200 --set dt=0.05
module heat_solver
    use iso_fortran_env, only: wp => real64
    implicit none
    private
    public :: grid, cn_steps

    type :: grid
        integer :: n = 0
        real(wp) :: h = 0.0_wp
    end type grid

contains

    pure subroutine thomas(a, b, c, d, x)
        real(wp), intent(in) :: a(:), b(:), c(:), d(:)
        real(wp), intent(out) :: x(:)
        real(wp) :: cp(size(d)), dp(size(d)), m
        integer :: i, n
        n = size(d)
        cp(1) = c(1)/b(1)
        dp(1) = d(1)/b(1)
        do i = 2, n
            m = b(i) - a(i)*cp(i - 1)
            cp(i) = c(i)/m
            dp(i) = (d(i) - a(i)*dp(i - 1))/m
        end do
        x(n) = dp(n)
        do i = n - 1, 1, -1
            x(i) = dp(i) - cp(i)*x(i + 1)
        end do
    end subroutine thomas

    subroutine cn_steps(g, u, kappa, left, right, dt, nsteps, taken)
        type(grid), intent(in) :: g
        real(wp), intent(inout) :: u(:)
        real(wp), intent(in) :: kappa, left, right, dt
        integer, intent(in) :: nsteps
        integer, intent(out) :: taken
        integer :: k, i, m
        if (g%n < 3 .or. size(u) /= g%n) error stop 'cn_steps: bad grid'
        m = g%n - 2
        associate (r => kappa*dt/g%h**2)
            block
                real(wp), dimension(size(u) - 2) :: lo, di, up, rhs, unew
                lo = -0.5_wp*r
                up = -0.5_wp*r
                di = 1.0_wp + r
                u(1) = left
                u(g%n) = right
                taken = 0
                steps: do k = 1, nsteps
                    rhs = u(2:g%n - 1) + 0.5_wp*r*(u(1:g%n - 2) - 2.0_wp*u(2:g%n - 1) + u(3:g%n))
                    rhs(1) = rhs(1) + 0.5_wp*r*left
                    rhs(m) = rhs(m) + 0.5_wp*r*right
                    call thomas(lo, di, up, rhs, unew)
                    taken = k
                    if (maxval(abs(unew - u(2:g%n - 1))) < 1.0e-12_wp) then
                        u(2:g%n - 1) = unew
                        exit steps
                    end if
                    do concurrent (i = 1:m)
                        u(i + 1) = unew(i)
                    end do
                end do steps
            end block
        end associate
    end subroutine cn_steps

end module heat_solver

subroutine heat(u, kappa, left, right, nsteps, dt, taken)
    use iso_fortran_env, only: wp => real64
    use heat_solver
    implicit none
    real(wp), intent(inout) :: u(8)
    real(wp), intent(in) :: kappa, left, right, dt
    integer, intent(in) :: nsteps
    integer, intent(out) :: taken
    type(grid) :: g
    g = grid(n=size(u), h=1.0_wp/(size(u) - 1))
    call cn_steps(g, u, kappa, left, right, dt, nsteps, taken)
end subroutine heat

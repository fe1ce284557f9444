! An explicit heat-equation stepper in modern style: a grid type, BLOCK
! constructs with their own declarations, ASSOCIATE names for the
! components, named DO loops with EXIT (steady state reached) and CYCLE
! (the boundary rows), a stability-limited time step and a Neumann or
! Dirichlet boundary chosen by an OPTIONAL argument; the final temperature
! and the heat content are differentiated with respect to the initial
! profile and the diffusivity.
! adjit-test: --entry heat_run --set u0=0.0,0.4,0.9,1.0,0.7,0.2,0.0 --set diffusivity=0.8 --set steps=40
! adjit-test: --entry heat_run --set u0=1.0,0.2,0.5,0.3,0.9,0.4,0.6 --set diffusivity=1.3 --set steps=25
module heat_grid
  implicit none
  integer, parameter :: rk = kind(1.0d0)
  type :: grid1d
    integer :: n
    real(rk) :: length = 1.0_rk
    real(rk) :: dx
  end type grid1d
contains
  pure function make_grid(n, length) result(g)
    integer, intent(in) :: n
    real(rk), intent(in) :: length
    type(grid1d) :: g
    g%n = n
    g%length = length
    g%dx = length / (n - 1)
  end function make_grid

  !> Advances u by at most max_steps explicit steps of diffusion, stopping
  !> once the largest change of a step is below tol.
  subroutine diffuse(g, u, kappa, max_steps, tol, taken, insulated)
    type(grid1d), intent(in) :: g
    real(rk), intent(inout), target :: u(g%n)
    real(rk), intent(in) :: kappa, tol
    integer, intent(in) :: max_steps
    integer, intent(out) :: taken
    logical, intent(in), optional :: insulated
    logical :: neumann
    integer :: step, i
    neumann = .false.
    if (present(insulated)) neumann = insulated
    taken = 0
    associate (n => g%n, dx => g%dx)
      block
        real(rk) :: dt, r, change
        real(rk) :: unew(size(u))
        dt = 0.4_rk * dx**2 / kappa
        r = kappa * dt / dx**2
        time: do step = 1, max_steps
          change = 0.0_rk
          space: do i = 1, n
            if (i == 1 .or. i == n) then
              if (.not. neumann) then
                unew(i) = u(i)
                cycle space
              end if
              if (i == 1) then
                unew(i) = u(i) + 2.0_rk * r * (u(2) - u(1))
              else
                unew(i) = u(i) + 2.0_rk * r * (u(n - 1) - u(n))
              end if
              cycle space
            end if
            unew(i) = u(i) + r * (u(i - 1) - 2.0_rk * u(i) + u(i + 1))
            change = max(change, abs(unew(i) - u(i)))
          end do space
          u = unew
          taken = step
          if (change < tol) exit time
        end do time
      end block
    end associate
  end subroutine diffuse

  pure function heat_content(g, u) result(q)
    type(grid1d), intent(in) :: g
    real(rk), intent(in) :: u(:)
    real(rk) :: q
    associate (dx => g%dx, n => g%n)
      q = dx * (sum(u) - 0.5_rk * (u(1) + u(n)))
    end associate
  end function heat_content
end module heat_grid

subroutine heat_run(u0, diffusivity, steps, u, u_insulated, content, taken)
  use heat_grid
  implicit none
  real(rk), intent(in) :: u0(7), diffusivity
  integer, intent(in) :: steps
  real(rk), intent(out) :: u(7), u_insulated(7), content(2)
  integer, intent(out) :: taken(2)
  type(grid1d) :: g
  g = make_grid(7, 2.0_rk)
  u = u0
  call diffuse(g, u, diffusivity, steps, 1.0e-3_rk, taken(1))
  u_insulated = u0
  call diffuse(g, u_insulated, diffusivity, steps, 1.0e-3_rk, taken(2), insulated=.true.)
  content = [heat_content(g, u), heat_content(g, u_insulated)]
end subroutine heat_run

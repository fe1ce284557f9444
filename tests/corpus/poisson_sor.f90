! A 2-D finite-difference Poisson solver, -lap(u) = f on the unit square
! with Dirichlet boundary values, by successive over-relaxation: red-black
! sweeps in named DO loops, EXIT from the outer iteration once the
! residual norm falls under the tolerance, an optimal relaxation factor
! computed from the grid size unless one is given, and a grid type
! carrying the spacing and the interior size.
! adjit-test: --entry poisson_solve --set m=8 --set amp=2.5 --set edge=0.3 --set tol=1e-10 --set omega=0
! adjit-test: --entry poisson_solve --set m=6 --set amp=-1.0 --set edge=1.2 --set tol=1e-8 --set omega=1.5
module poisson2d
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), parameter :: pi = 4.0_dp*atan(1.0_dp)

  type grid2d
    integer :: m
    real(dp) :: h
  end type grid2d

contains

  function make_grid(m) result(g)
    integer, intent(in) :: m
    type(grid2d) :: g
    g%m = m
    g%h = 1.0_dp/(m + 1)
  end function make_grid

  function residual_norm(g, u, f) result(rn)
    type(grid2d), intent(in) :: g
    real(dp), intent(in) :: u(0:, 0:), f(:, :)
    real(dp) :: rn
    integer :: i, j
    real(dp) :: r
    rn = 0
    do j = 1, g%m
      do i = 1, g%m
        r = f(i, j) - (4.0_dp*u(i, j) - u(i-1, j) - u(i+1, j) - u(i, j-1) - u(i, j+1))/g%h**2
        rn = rn + r*r
      end do
    end do
    rn = sqrt(rn)*g%h
  end function residual_norm

  subroutine sor_solve(g, u, f, tol, iterations, omega)
    type(grid2d), intent(in) :: g
    real(dp), intent(inout) :: u(0:, 0:)
    real(dp), intent(in) :: f(:, :), tol
    integer, intent(out) :: iterations
    real(dp), intent(in), optional :: omega
    real(dp) :: w, gs
    integer :: it, colour, i, j
    if (present(omega)) then
      w = omega
    else
      w = 2.0_dp/(1.0_dp + sin(pi*g%h))
    end if
    iterations = 0
    outer: do it = 1, 500
      iterations = it
      sweep: do colour = 0, 1
        rows: do j = 1, g%m
          do i = 1 + mod(j + colour, 2), g%m, 2
            gs = 0.25_dp*(u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) + g%h**2*f(i, j))
            u(i, j) = u(i, j) + w*(gs - u(i, j))
          end do
        end do rows
      end do sweep
      if (residual_norm(g, u, f) < tol) exit outer
    end do outer
  end subroutine sor_solve

end module poisson2d

subroutine poisson_solve(m, amp, edge, tol, omega, centre, mean, iterations)
  use poisson2d
  implicit none
  integer, intent(in) :: m
  real(dp), intent(in) :: amp, edge, tol
  real(dp), intent(in) :: omega
  real(dp), intent(out) :: centre, mean
  integer, intent(out) :: iterations
  type(grid2d) :: g
  real(dp) :: u(0:m+1, 0:m+1), f(m, m), x, y
  integer :: i, j
  g = make_grid(m)
  do j = 1, m
    do i = 1, m
      x = i*g%h
      y = j*g%h
      f(i, j) = amp*sin(pi*x)*sin(2.0_dp*pi*y) + 1.0_dp
    end do
  end do
  u = 0
  u(0, :) = edge
  u(m+1, :) = edge*[(real(j, dp)*g%h, j = 0, m + 1)]
  ! omega <= 0: the solver's optimal factor.
  if (omega > 0) then
    call sor_solve(g, u, f, tol, iterations, omega)
  else
    call sor_solve(g, u, f, tol, iterations)
  end if
  centre = u((m + 1)/2, (m + 1)/2)
  mean = sum(u(1:m, 1:m))/m**2
end subroutine poisson_solve

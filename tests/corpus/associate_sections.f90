! ASSOCIATE with array sections and array values as selectors, the way a
! finite-volume code names the parts of its state: `q => s%u(1:n)`,
! `inner => x(2:n-1)`, a strided section, a section of a rank-2 array,
! writes through the names (they are the variable's sections), SIZE /
! SUM / elements / sub-sections of them, a name passed to an
! assumed-shape dummy that updates it, and an expression of array value
! (`r => b - matmul(a, x)`) evaluated once at entry.
! adjit-test: --entry fv_update --set n=6 --set x=1,2,0.5,3,1.5,2.5 --set dt=0.1
! adjit-test: --entry fv_update --set n=4 --set x=-1,0.25,2,0.75 --set dt=0.35
! adjit-test: --entry residual_norms --set n=3 --set a=4,1,0.5,1,3,0.25,0.5,0.25,2 --set x=1,-1,2 --set b=1,2,3
module fv_state
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type state
    real(dp) :: u(8)
    real(dp) :: flux(9)
    real(dp) :: cfl
  end type state
contains
  subroutine relax(v, w)
    real(dp), intent(inout) :: v(:)
    real(dp), intent(in) :: w
    integer :: i
    do i = 2, size(v)
      v(i) = (1 - w)*v(i) + w*v(i-1)
    end do
  end subroutine relax

  pure function total(v) result(t)
    real(dp), intent(in) :: v(:)
    real(dp) :: t
    t = sum(v)/size(v)
  end function total
end module fv_state

subroutine fv_update(n, x, dt, u, mass, edge, grid)
  use fv_state
  implicit none
  integer, intent(in) :: n
  real(dp), intent(inout) :: x(n)
  real(dp), intent(in) :: dt
  real(dp), intent(out) :: u(n), mass, edge, grid(3, 4)
  type(state) :: s
  integer :: i, k
  s%u = 0
  s%flux = 0
  s%cfl = dt
  s%u(1:n) = x
  grid = reshape([(0.5_dp*i, i = 1, 12)], [3, 4])
  k = n
  associate (q => s%u(1:n), f => s%flux(1:n+1), inner => x(2:n-1))
    k = 1
    do i = 2, size(q)
      f(i) = 0.5_dp*(q(i-1)**2 + q(i)**2) - 0.5_dp*abs(q(i) - q(i-1))*(q(i) - q(i-1))
    end do
    q = q - dt*(f(2:n+1) - f(1:n))
    inner = inner + dt*q(2:n-1)
    call relax(inner, 0.25_dp)
    mass = sum(q) + total(inner)*size(inner)
    edge = q(1) + q(size(q)) + sum(f)
  end associate
  associate (evens => x(2:n:2), row => grid(2, 1:3), col => grid(:, k + 1))
    evens = evens*(1 + s%cfl)
    row(2:) = row(2:) + evens(1)
    col = col - sum(evens)
    edge = edge + size(evens) + row(3)
  end associate
  u = s%u(1:n)
end subroutine fv_update

subroutine residual_norms(n, a, x, b, r, rnorm, rmax)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n), x(n), b(n)
  double precision, intent(out) :: r(n), rnorm, rmax
  associate (res => b - matmul(a, x), d => x(n:1:-1) - 1.0d0)
    r = res
    rnorm = sqrt(sum(res**2))
    rmax = maxval(abs(res)) + d(1)*d(n) + size(d)
  end associate
end subroutine residual_norms

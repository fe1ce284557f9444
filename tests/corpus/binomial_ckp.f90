! Loops under Tapenade's `!$AD BINOMIAL-CKP nsteps nsnapshots first`
! directive: the adjoint reverses their trips by binomial checkpointing
! (the primal is unchanged; gfortran reads the directive as a comment).
! adjit-test: --entry heat --set n=12 --set nsteps=40 --set u=0,0.1,0.3,0.5,0.2,0.4,0.6,0.1,0.05,0.3,0.2,0 --set r=0.2
! adjit-test: --entry heat --set n=5 --set nsteps=1 --set u=0.5,0.1,0.3,0.2,0.4 --set r=0.1
! adjit-test: --entry heat --set n=5 --set nsteps=0 --set u=0.5,0.1,0.3,0.2,0.4 --set r=0.1
! adjit-test: --entry orbit --set steps=25 --set k=3 --set x=1 --set v=0.5 --set h=0.05
! adjit-test: --entry nested --set m=6 --set x=0.3,0.7 --set a=1.1
! adjit-test: --entry skipping --set n=17 --set x=0.9 --set c=0.4
module ckp_state
  implicit none
  double precision :: drag = 0.1d0
  integer :: calls = 0
contains
  subroutine kick(x, v, h)
    double precision, intent(in) :: x, h
    double precision, intent(inout) :: v
    calls = calls + 1
    v = v - h * (sin(x) + drag * v * abs(v))
  end subroutine kick
end module ckp_state

! One explicit step of the heat equation with a temperature-dependent
! conductivity.
subroutine heat_step(n, u, unew, r)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: u(n)
  double precision, intent(out) :: unew(n)
  double precision, intent(in) :: r
  integer :: i
  unew(1) = u(1)
  unew(n) = u(n)
  do i = 2, n - 1
    unew(i) = u(i) + r * (1.0d0 + 0.1d0 * u(i)**2) * (u(i-1) - 2.0d0*u(i) + u(i+1))
  end do
  u = unew
end subroutine heat_step

! The explicit heat equation: nsteps steps, then the squared norm.
subroutine heat(n, nsteps, u, r, cost)
  implicit none
  integer, intent(in) :: n, nsteps
  double precision, intent(inout) :: u(n)
  double precision, intent(in) :: r
  double precision, intent(out) :: cost
  double precision :: unew(n)
  integer :: i, step
  !$AD BINOMIAL-CKP nsteps 3 1
  do step = 1, nsteps
    call heat_step(n, u, unew, r)
  end do
  cost = 0.0d0
  do i = 1, n
    cost = cost + u(i)**2
  end do
end subroutine heat

! A pendulum with drag (a module variable) integrated by symplectic Euler;
! the step calls a module procedure that counts its calls in a global. The
! directive's arguments are expressions.
subroutine orbit(steps, k, x, v, h, energy)
  use ckp_state
  implicit none
  integer, intent(in) :: steps, k
  double precision, intent(inout) :: x, v
  double precision, intent(in) :: h
  double precision, intent(out) :: energy
  integer :: t
  !$AD BINOMIAL-CKP steps+1 k-1 1
  do t = 0, steps
    call kick(x, v, h)
    x = x + h * v
  end do
  energy = 0.5d0 * v**2 - cos(x)
end subroutine orbit

! A checkpointed loop nested in a checkpointed loop.
subroutine nested(m, x, a, y)
  implicit none
  integer, intent(in) :: m
  double precision, intent(inout) :: x(2)
  double precision, intent(in) :: a
  double precision, intent(out) :: y
  integer :: i, j
  double precision :: t
  !$AD BINOMIAL-CKP m 2 1
  do i = 1, m
    !$AD BINOMIAL-CKP 3 2 1
    do j = 1, 3
      t = x(1)
      x(1) = x(1) * cos(a * x(2)) - 0.1d0 * x(2)
      x(2) = x(2) + 0.2d0 * sin(t) * dble(j)
    end do
    x(2) = x(2) * 0.9d0
  end do
  y = x(1) * x(2)
end subroutine nested

! A step that CYCLEs on odd trips, with a stride of 2 and a countdown.
subroutine skipping(n, x, c, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x
  double precision, intent(in) :: c
  double precision, intent(out) :: y
  integer :: i
  y = 0.0d0
  !$AD BINOMIAL-CKP n 2 n
  do i = n, 1, -2
    if (mod(i, 3) == 0) cycle
    x = x * (1.0d0 + c * x) / (1.0d0 + x**2)
    y = y + x * dble(i)
  end do
end subroutine skipping

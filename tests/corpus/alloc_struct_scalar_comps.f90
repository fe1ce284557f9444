! ALLOCATABLE arrays of structures whose type has ALLOCATABLE scalar
! components, as an N-body library keeps its bodies: a `spawn` routine (an
! INTENT(OUT) ALLOCATABLE dummy) allocates the bodies, then gives only the
! massive ones a mass and only some a charge (per-element ALLOCATE and
! allocation on assignment); a potential reads them through an
! assumed-shape dummy, skipping the unallocated ones; a `grow` routine
! (ALLOCATABLE INTENT(INOUT) dummy) copies the bodies into a larger array
! (a deep copy keeping each body's status), a drift routine updates the
! masses in place. DEALLOCATE of one body's mass, of the whole array, and
! a fresh ALLOCATE whose bodies start without mass.
! adjit-test: --entry run --set n=3 --set x=0.5,1.5,-1,2
! adjit-test: --entry run --set n=5 --set x=-0.25,0.75,1.25,0.5
module nbody_bodies
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: body
    real(dp) :: pos(2)
    real(dp), allocatable :: mass
    real(dp), allocatable :: charge
    integer :: id
  end type
contains
  subroutine spawn(bodies, n, x)
    type(body), allocatable, intent(out) :: bodies(:)
    integer, intent(in) :: n
    real(dp), intent(in) :: x(:)
    integer :: i
    allocate(bodies(n))
    do i = 1, n
      bodies(i)%id = i
      bodies(i)%pos(1) = x(mod(i, size(x)) + 1) * i
      bodies(i)%pos(2) = x(mod(i + 1, size(x)) + 1) - i
      if (mod(i, 2) == 1) then
        allocate(bodies(i)%mass)
        bodies(i)%mass = 1 + x(1)**2 * i
      end if
      if (i > 1) bodies(i)%charge = x(2) / i
    end do
  end subroutine

  real(dp) function potential(bodies)
    type(body), intent(in) :: bodies(:)
    integer :: i, j
    real(dp) :: mi, mj, r2
    potential = 0
    do i = 1, size(bodies)
      mi = 0.5_dp
      if (allocated(bodies(i)%mass)) mi = bodies(i)%mass
      if (allocated(bodies(i)%charge)) potential = potential + bodies(i)%charge * bodies(i)%pos(1)
      do j = i + 1, size(bodies)
        mj = 0.5_dp
        if (allocated(bodies(j)%mass)) mj = bodies(j)%mass
        r2 = 1 + sum((bodies(i)%pos - bodies(j)%pos)**2)
        potential = potential - mi * mj / sqrt(r2)
      end do
    end do
  end function

  subroutine drift(bodies, dt)
    type(body), intent(inout) :: bodies(:)
    real(dp), intent(in) :: dt
    integer :: i
    do i = 1, size(bodies)
      if (allocated(bodies(i)%mass)) then
        bodies(i)%mass = bodies(i)%mass * (1 - dt * bodies(i)%pos(2))
        bodies(i)%pos = bodies(i)%pos + dt / bodies(i)%mass
      end if
    end do
  end subroutine

  subroutine grow(bodies, extra)
    type(body), allocatable, intent(inout) :: bodies(:)
    integer, intent(in) :: extra
    type(body), allocatable :: old(:)
    integer :: n
    old = bodies
    n = size(old)
    deallocate(bodies)
    allocate(bodies(n + extra))
    bodies(1:n) = old
    bodies(n + 1:)%id = 0
    bodies(n + 1:)%pos(1) = 0.25_dp
    bodies(n + 1:)%pos(2) = -0.5_dp
  end subroutine

  integer function count_massive(bodies)
    type(body), intent(in) :: bodies(:)
    integer :: i
    count_massive = 0
    do i = 1, size(bodies)
      if (allocated(bodies(i)%mass)) count_massive = count_massive + 1
    end do
  end function
end module

subroutine run(n, x, y, flags)
  use nbody_bodies
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(4)
  real(dp), intent(out) :: y(4)
  integer, intent(out) :: flags(6)
  type(body), allocatable :: bodies(:), snap(:)
  call spawn(bodies, n, x)
  y(1) = potential(bodies)
  snap = bodies
  call drift(bodies, 0.125_dp)
  y(2) = potential(bodies) - snap(1)%mass
  deallocate(snap(1)%mass)
  flags(1) = count_massive(snap)
  flags(2) = count_massive(bodies)
  call grow(bodies, 2)
  bodies(n + 2)%mass = x(3) * x(4)
  y(3) = potential(bodies) + potential(snap)
  flags(3) = size(bodies)
  flags(4) = count_massive(bodies)
  deallocate(bodies)
  flags(5) = merge(1, 0, allocated(bodies))
  allocate(bodies(2))
  bodies(1)%pos = [x(1), x(2)]
  bodies(2)%pos = [x(3), x(4)]
  flags(6) = count_massive(bodies)
  bodies(2)%charge = x(1) * x(4)
  y(4) = potential(bodies)
end subroutine

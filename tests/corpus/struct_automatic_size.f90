! Automatic arrays of structures sized by SIZE of an assumed-shape array
! of structures (`type(particle) :: next(size(ring))`, and by one
! dimension, `size(grid, 2)`): a leapfrog step of particles on a ring
! written into a work array of the dummy's size, and column sums of a
! rank-2 array of structures; SIZE of constructors of structures.
! adjit-test: --entry ring_energy --set x=1,2,3,0.5 --set v=0.5,-1,2,0.25 --set dt=0.1 --set steps=3
! adjit-test: --entry ring_energy --set x=-1,0.5,2,1 --set v=1,1,-0.5,0 --set dt=0.05 --set steps=5
module ring_dynamics
  implicit none
  type particle
    real(8) :: x, v
  end type
contains
  subroutine leapfrog(ring, dt)
    type(particle), intent(inout) :: ring(:)
    real(8), intent(in) :: dt
    type(particle) :: next(size(ring))
    integer :: i, n, right
    n = size(ring)
    do i = 1, n
      right = mod(i, n) + 1
      next(i)%v = ring(i)%v + dt * (ring(right)%x - ring(i)%x)
      next(i)%x = ring(i)%x + dt * next(i)%v
    end do
    ring = next
  end subroutine

  function column_energy(grid) result(e)
    type(particle), intent(in) :: grid(:, :)
    real(8) :: e
    type(particle) :: col(size(grid, 2))
    integer :: j
    do j = 1, size(grid, 2)
      col(j)%x = sum(grid(:, j)%x)
      col(j)%v = sum(grid(:, j)%v**2)
    end do
    e = sum(col%x * col%v)
  end function
end module

subroutine ring_energy(x, v, dt, steps, e, g)
  use ring_dynamics
  implicit none
  real(8), intent(in) :: x(4), v(4), dt
  integer, intent(in) :: steps
  real(8), intent(out) :: e, g
  type(particle) :: ring(4), grid(2, 2)
  integer :: k
  ring%x = x
  ring%v = v
  do k = 1, steps
    call leapfrog(ring, dt)
  end do
  e = 0.5d0 * sum(ring%v**2)
  do k = 1, 4
    e = e + ring(k)%x * ring(5 - k)%x
  end do
  grid(:, 1) = ring(1:2)
  grid(:, 2) = ring(3:4)
  g = column_energy(grid) + size([ring, grid(1, 2)]) + 10 * size([ring, ring(1), ring])
end subroutine

! Array intrinsics of arrays of structures whose type has an array
! component: a ring of particles rotated with CSHIFT (also in place),
! shifted off its end with EOSHIFT and a structure BOUNDARY=, a cell
! broadcast to the whole ring and to a section, SPREAD of a particle into
! a rank-2 array, RESHAPE of the ring into a grid, TRANSPOSE of the grid,
! and the inquiries SHAPE, SIZE(DIM=), LBOUND and UBOUND of arrays of
! structures.
! adjit-test: --entry ring_shifts --set s=1.5 --set t=0.5
! adjit-test: --entry ring_shifts --set s=-0.75 --set t=1.25
module derived_array_shifts_m
  implicit none
  type :: particle
    real(8) :: m
    real(8) :: q(2)
  end type
contains
  ! The energy of a ring: each particle against its successor.
  function ring_energy(ring, n) result(e)
    integer, intent(in) :: n
    type(particle), intent(in) :: ring(n)
    real(8) :: e
    type(particle) :: next(n)
    integer :: i
    next = cshift(ring, 1)
    e = 0d0
    do i = 1, n
      e = e + ring(i)%m * next(i)%m * sum((ring(i)%q - next(i)%q)**2)
    end do
  end function ring_energy
end module derived_array_shifts_m

subroutine ring_shifts(s, t, r)
  use derived_array_shifts_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(12)
  type(particle) :: ring(0:5), moved(6), edge, grid(2, 3), flip(3, 2), rows(3, 6)
  integer :: i, shp(2)
  edge = particle(t * t, [s, -t])
  ring = particle(0d0, [0d0, 0d0])
  ring(1:4) = edge
  do i = 0, 5
    ring(i)%m = ring(i)%m + s * i
    ring(i)%q(2) = ring(i)%q(2) + t * i * i
  end do
  r(1) = ring_energy(ring, 6)
  moved = cshift(ring, -2)
  r(2) = moved(1)%m * moved(3)%q(1) + moved(6)%q(2)
  ring = cshift(ring, 1)
  r(3) = ring(0)%m - ring(5)%q(2) * ring(2)%m
  moved = eoshift(ring, 2, boundary=edge)
  r(4) = sum(moved%m) + moved(6)%q(1) * moved(5)%q(2) + moved(1)%q(2)
  moved = eoshift(ring, -1, particle(s, [t, 1d0]))
  r(5) = moved(1)%m + moved(2)%q(2) * s
  rows = spread(ring, 1, 3)
  r(6) = rows(2, 3)%m * rows(3, 4)%q(2)
  grid = reshape(moved, [2, 3])
  flip = transpose(grid)
  r(7) = flip(3, 1)%m * flip(2, 2)%q(2) + flip(1, 2)%q(1)
  shp = shape(grid)
  r(8) = shp(1) * 10 + shp(2) + size(flip, 1) * 100 + size(rows, dim=2) * 1000
  r(9) = lbound(ring, 1) * 10 + ubound(ring, 1) + size(ring)
  r(10) = ring_energy(moved, 6) * t
  grid(1, :) = cshift(grid(2, :), 1)
  r(11) = grid(1, 1)%m + grid(1, 3)%q(2) * grid(1, 2)%q(1) + grid(2, 2)%m
  flip = transpose(grid)
  r(12) = sum(flip%m) * sum(flip(:, 1)%m) + flip(2, 1)%q(2) * flip(3, 2)%q(1)
end subroutine ring_shifts

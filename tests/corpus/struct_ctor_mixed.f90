! Array constructors of structures mixing whole arrays with other items,
! as a particle library's callers write them: a ring of particles with a
! probe before or after it (`energy([probe, ring])`, `energy([ring,
! probe])`), elements of the ring (`[ring(1), probe, ring(3)]`) for
! assumed-shape and explicit-shape dummies, a rank-2 grid flattened into
! a constructor, the same constructors assigned to an array of structures,
! and SIZE of constructors holding a rank-2 array of structures. The
! particles have an array component (positions) and scalar ones.
! adjit-test: --entry run --set x=0.5,1.5,-1 --set w=2
! adjit-test: --entry run --set x=-0.25,0.75,1.25 --set w=0.5
module cloud
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: particle
    real(dp) :: pos(2)
    real(dp) :: mass
    integer :: tag
  end type
contains
  real(dp) function energy(ps)
    type(particle), intent(in) :: ps(:)
    integer :: i
    energy = 0
    do i = 1, size(ps)
      energy = energy + ps(i)%mass * (ps(i)%pos(1)**2 + i * ps(i)%pos(2)) * ps(i)%tag
    end do
  end function

  real(dp) function spread_x(n, ps)
    integer, intent(in) :: n
    type(particle), intent(in) :: ps(n)
    spread_x = maxval(ps%pos(1)) - minval(ps%pos(1)) + sum(ps%mass) / n
  end function

  subroutine centre(ps, c)
    type(particle), intent(in) :: ps(:)
    real(dp), intent(out) :: c(2)
    integer :: k
    do k = 1, 2
      c(k) = sum(ps%mass * ps%pos(k)) / sum(ps%mass)
    end do
  end subroutine
end module

subroutine run(x, w, y, counts)
  use cloud
  implicit none
  real(dp), intent(in) :: x(3), w
  real(dp), intent(out) :: y(10)
  integer, intent(out) :: counts(4)
  type(particle) :: probe, ring(3), grid(2, 2)
  type(particle), allocatable :: merged(:)
  integer :: i, j
  probe = particle([w, x(1)], 1 + w**2, 5)
  do i = 1, 3
    ring(i) = particle([x(i) * i, w - i], 1 + x(i)**2 / i, i)
  end do
  do j = 1, 2
    do i = 1, 2
      grid(i, j) = particle([x(i) + j, x(j) * w], 0.5_dp * (i + j), i * j)
    end do
  end do
  y(1) = energy([probe, ring])
  y(2) = energy([ring, probe])
  y(3) = energy([ring(1), probe, ring(3)])
  y(4) = spread_x(4, [ring(2), ring, probe])
  call centre([ring, grid], y(5:6))
  y(7) = energy([grid, probe])
  merged = [probe, ring, ring(2)]
  y(8) = energy(merged)
  merged = [ring(3), grid, ring]
  y(9) = energy(merged) + merged(5)%pos(2)
  y(10) = spread_x(5, [probe, grid])
  counts(1) = size([grid, probe])
  counts(2) = size([ring, grid, ring(1)])
  counts(3) = size(merged)
  counts(4) = merged(2)%tag
end subroutine

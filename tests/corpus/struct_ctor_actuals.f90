! Array constructors of structures as actual arguments, as a particle
! library's callers write them: `total_mass([p1, p2, p3])` for an
! assumed-shape dummy, a constructor mixing variables and a structure
! constructor for an explicit-shape dummy (`moment(3, [a, particle(...),
! b], 1)`),
! a nested call passing the constructor on, and a whole array in brackets
! (`[ring]`); the particles have an array component (positions) and
! scalar ones.
! adjit-test: --entry run --set x=0.5,1.5,-1 --set w=2
! adjit-test: --entry run --set x=-0.25,0.75,1.25 --set w=0.5
module particles
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: particle
    real(dp) :: pos(2)
    real(dp) :: mass
    integer :: tag
  end type
contains
  real(dp) function total_mass(ps)
    type(particle), intent(in) :: ps(:)
    integer :: i
    total_mass = 0
    do i = 1, size(ps)
      total_mass = total_mass + ps(i)%mass * ps(i)%tag
    end do
  end function

  real(dp) function moment(n, ps, axis)
    integer, intent(in) :: n, axis
    type(particle), intent(in) :: ps(n)
    moment = sum(ps%mass * ps%pos(axis)**2)
  end function

  subroutine centre(ps, c)
    type(particle), intent(in) :: ps(:)
    real(dp), intent(out) :: c(2)
    integer :: k
    do k = 1, 2
      c(k) = sum(ps%mass * ps%pos(k)) / total_mass(ps)
    end do
  end subroutine
end module

subroutine run(x, w, y, counts)
  use particles
  implicit none
  real(dp), intent(in) :: x(3), w
  real(dp), intent(out) :: y(5)
  integer, intent(out) :: counts(2)
  type(particle) :: a, b, ring(3)
  integer :: i
  a = particle([x(1), x(2)], w, 1)
  b = particle([x(3), 1.0_dp], x(1)**2 + 1, 2)
  do i = 1, 3
    ring(i) = particle([x(i) * i, w - i], 1 + x(i)**2 / i, i)
  end do
  y(1) = total_mass([a, b])
  y(2) = moment(3, [a, particle([w, x(2)], 3 * w, 1), b], 1)
  call centre([b, a], y(3:4))
  y(5) = moment(2, [b, a], 2) + total_mass([ring])
  counts(1) = size([a, b, ring])
  counts(2) = size([ring, ring(1)])
end subroutine

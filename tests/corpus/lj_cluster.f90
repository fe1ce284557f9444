! Lennard-Jones cluster energy with a neighbour cutoff: a module of pure
! pair functions (potential shifted to zero at the cutoff, minimum-image
! distance in a periodic box), a neighbour count, and the energy and
! virial summed over pairs inside the cutoff; the coordinates are the
! inputs.
! adjit-test: --entry lj_energy --set n=5 --set pos=0,0,0,1.1,0,0,0,1.15,0,0.2,0.3,1.05,2.9,2.8,0.1 --set box=4.0 --set rc=2.5
! adjit-test: --entry lj_energy --set n=4 --set pos=0.1,0.2,0.1,1.2,0.1,0.3,0.5,1.3,-0.2,2.4,0.9,0.6 --set box=3.9 --set rc=1.8
module lj_potential
  implicit none
  private
  public :: pair_energy, pair_virial, min_image, dp
  integer, parameter :: dp = selected_real_kind(15, 300)
  real(dp), parameter :: sigma = 1.0_dp, epsilon = 1.0_dp

contains

  pure elemental function min_image(d, box) result(m)
    real(dp), intent(in) :: d, box
    real(dp) :: m
    m = d - box*anint(d/box)
  end function min_image

  pure function pair_energy(r2, rc) result(u)
    real(dp), intent(in) :: r2, rc
    real(dp) :: u
    real(dp) :: s6, s6c
    s6 = (sigma**2/r2)**3
    s6c = (sigma/rc)**6
    u = 4.0_dp*epsilon*((s6*s6 - s6) - (s6c*s6c - s6c))
  end function pair_energy

  pure function pair_virial(r2) result(w)
    real(dp), intent(in) :: r2
    real(dp) :: w
    real(dp) :: s6
    s6 = (sigma**2/r2)**3
    w = 24.0_dp*epsilon*(2.0_dp*s6*s6 - s6)
  end function pair_virial

end module lj_potential

module lj_system
  use lj_potential
  implicit none
contains

  subroutine total_energy(pos, box, rc, energy, virial, neighbours)
    real(dp), intent(in) :: pos(:, :)
    real(dp), intent(in) :: box, rc
    real(dp), intent(out) :: energy, virial
    integer, intent(out) :: neighbours(:)
    real(dp) :: d(3), r2, rc2
    integer :: i, j, n
    n = size(pos, 2)
    rc2 = rc*rc
    energy = 0
    virial = 0
    neighbours = 0
    do i = 1, n - 1
      do j = i + 1, n
        d = min_image(pos(:, i) - pos(:, j), box)
        r2 = sum(d**2)
        if (r2 >= rc2) cycle
        energy = energy + pair_energy(r2, rc)
        virial = virial + pair_virial(r2)
        neighbours(i) = neighbours(i) + 1
        neighbours(j) = neighbours(j) + 1
      end do
    end do
  end subroutine total_energy

end module lj_system

subroutine lj_energy(n, pos, box, rc, energy, virial, pressure, nbr)
  use lj_system
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: pos(3, n), box, rc
  real(dp), intent(out) :: energy, virial, pressure
  integer, intent(out) :: nbr(n)
  call total_energy(pos, box, rc, energy, virial, nbr)
  pressure = (n + virial/3.0_dp)/box**3
end subroutine lj_energy

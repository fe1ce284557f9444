! A physical-constants and units module as scientific codes keep them:
! kinds from iso_fortran_env, named constants (CODATA values), PARAMETER
! arrays of conversion factors and unit names indexed by named integer
! constants, a constant computed from others, a lookup by name; a small
! ideal-gas / radiation model converts its inputs through them and is
! differentiated with respect to temperature, pressure and emissivity.
! adjit-test: --entry gas_state --set temp_c=25.0 --set pressure_psi=14.7 --set emissivity=0.9 --set unit_code=2
! adjit-test: --entry gas_state --set temp_c=-40.0 --set pressure_psi=30.5 --set emissivity=0.35 --set unit_code=3
module physical_constants
  use, intrinsic :: iso_fortran_env, only: real64, int32
  implicit none
  private
  integer, parameter, public :: wp = real64
  real(wp), parameter, public :: pi = 3.14159265358979323846_wp
  real(wp), parameter, public :: boltzmann = 1.380649e-23_wp
  real(wp), parameter, public :: avogadro = 6.02214076e23_wp
  real(wp), parameter, public :: gas_constant = boltzmann * avogadro
  real(wp), parameter, public :: stefan_boltzmann = 2.0_wp * pi**5 * boltzmann**4 / &
      (15.0_wp * 6.62607015e-34_wp**3 * 299792458.0_wp**2)
  real(wp), parameter, public :: zero_celsius = 273.15_wp

  ! Pressure units: index constants, factors to pascal, names.
  integer(int32), parameter, public :: u_pa = 1, u_bar = 2, u_atm = 3, u_psi = 4
  real(wp), parameter, public :: to_pascal(4) = [1.0_wp, 1.0e5_wp, 101325.0_wp, 6894.757293168_wp]
  character(len=3), parameter, public :: unit_names(4) = ['Pa ', 'bar', 'atm', 'psi']
  public :: convert_pressure, unit_index
contains
  elemental function convert_pressure(p, from, to) result(q)
    real(wp), intent(in) :: p
    integer, intent(in) :: from, to
    real(wp) :: q
    q = p * to_pascal(from) / to_pascal(to)
  end function convert_pressure

  !> The index of the unit named `name` (0 when unknown).
  pure function unit_index(name) result(k)
    character(len=*), intent(in) :: name
    integer :: k
    do k = 1, size(unit_names)
      if (trim(unit_names(k)) == trim(name)) return
    end do
    k = 0
  end function unit_index
end module physical_constants

module gas_model
  use physical_constants
  implicit none
  real(wp), parameter :: molar_mass_air = 0.0289647_wp
  real(wp), parameter :: cp_coeffs(3) = [1002.5_wp, 0.0275_wp, 2.5e-4_wp]
contains
  pure function heat_capacity(t_kelvin) result(cp)
    real(wp), intent(in) :: t_kelvin
    real(wp) :: cp, tc
    integer :: k
    tc = t_kelvin - zero_celsius
    cp = 0.0_wp
    do k = size(cp_coeffs), 1, -1
      cp = cp * tc + cp_coeffs(k)
    end do
  end function heat_capacity

  subroutine gas_state(temp_c, pressure_psi, emissivity, unit_code, density, cp, radiated, p_out, label)
    real(wp), intent(in) :: temp_c, pressure_psi, emissivity
    integer, intent(in) :: unit_code
    real(wp), intent(out) :: density, cp, radiated, p_out(4)
    character(len=3), intent(out) :: label
    real(wp) :: t_kelvin, p_pa
    integer :: k
    t_kelvin = temp_c + zero_celsius
    p_pa = convert_pressure(pressure_psi, unit_index('psi'), u_pa)
    density = p_pa * molar_mass_air / (gas_constant * t_kelvin)
    cp = heat_capacity(t_kelvin)
    radiated = emissivity * stefan_boltzmann * t_kelvin**4
    p_out = convert_pressure(pressure_psi, u_psi, [(k, k = 1, 4)])
    label = unit_names(unit_code)
  end subroutine gas_state
end module gas_model

! Right-hand side of a chemical-kinetics ODE system (an ozone-like
! mechanism of five species and six reactions): Arrhenius rate constants
! from a PARAMETER rate table, reaction rates as products of
! concentrations, production and loss by stoichiometry, clipping of
! negative concentrations with WHERE and MERGE, and explicit Euler steps.
! adjit-test: --entry kinetics_step --set c0=1.0,0.5,0.2,0.05,0.0 --set temp=300 --set dt=0.06 --set nsteps=20
! adjit-test: --entry kinetics_step --set c0=0.3,1.2,0.0,0.4,0.1 --set temp=350 --set dt=0.005 --set nsteps=40
module kinetics
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: nspec = 5, nreac = 6
  real(dp), parameter :: gas_r = 8.314462618_dp
  ! Rate table: pre-exponential factor, activation energy (J/mol),
  ! temperature exponent.
  real(dp), parameter :: rate_table(3, nreac) = reshape([ &
    2.0e3_dp, 1.2e4_dp, 0.0_dp, &
    5.0e2_dp, 8.0e3_dp, 0.5_dp, &
    1.5e1_dp, 2.0e3_dp, 0.0_dp, &
    8.0e4_dp, 2.5e4_dp, -0.3_dp, &
    3.0e0_dp, 0.0_dp, 0.0_dp, &
    6.0e2_dp, 1.0e4_dp, 1.0_dp], [3, nreac])
  ! Reactants (two slots, 0 = none) and stoichiometry (species x reaction).
  integer, parameter :: reactant(2, nreac) = reshape([ &
    1, 2, &
    2, 0, &
    3, 4, &
    1, 3, &
    5, 0, &
    4, 4], [2, nreac])
  integer, parameter :: stoich(nspec, nreac) = reshape([ &
    -1, -1, 1, 0, 0, &
    0, -1, 1, 1, 0, &
    0, 0, -1, -1, 1, &
    -1, 0, -1, 1, 1, &
    1, 1, 0, 0, -1, &
    0, 1, 0, -2, 0], [nspec, nreac])

contains

  pure function rate_constants(temp) result(k)
    real(dp), intent(in) :: temp
    real(dp) :: k(nreac)
    k = rate_table(1, :)*(temp/300.0_dp)**rate_table(3, :) &
        *exp(-rate_table(2, :)/(gas_r*temp))
  end function rate_constants

  subroutine rhs(c, k, dcdt, rates)
    real(dp), intent(in) :: c(nspec), k(nreac)
    real(dp), intent(out) :: dcdt(nspec)
    real(dp), intent(out), optional :: rates(nreac)
    real(dp) :: w(nreac)
    integer :: j, s
    do j = 1, nreac
      w(j) = k(j)
      do s = 1, 2
        if (reactant(s, j) > 0) w(j) = w(j)*c(reactant(s, j))
      end do
    end do
    dcdt = matmul(real(stoich, dp), w)
    if (present(rates)) rates = w
  end subroutine rhs

end module kinetics

subroutine kinetics_step(c0, temp, dt, nsteps, c, total_rate, clipped)
  use kinetics
  implicit none
  real(dp), intent(in) :: c0(nspec), temp, dt
  integer, intent(in) :: nsteps
  real(dp), intent(out) :: c(nspec), total_rate
  integer, intent(out) :: clipped
  real(dp) :: k(nreac), dcdt(nspec), w(nreac)
  integer :: step
  k = rate_constants(temp)
  c = c0
  clipped = 0
  total_rate = 0
  do step = 1, nsteps
    call rhs(c, k, dcdt, w)
    c = c + dt*dcdt
    clipped = clipped + count(c < 0.0_dp)
    where (c < 0.0_dp) c = 0.0_dp
    total_rate = total_rate + sum(merge(w, 0.0_dp, w > 1.0e-3_dp))
  end do
end subroutine kinetics_step

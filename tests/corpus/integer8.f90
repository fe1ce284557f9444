! 64-bit integers: INTEGER(8), INTEGER*8 and integer(kind=8) arithmetic
! beyond the 32-bit range (binomial coefficients, a linear congruential
! generator modulo 2**31 - 1), conversion to and from REAL(8).
! adjit-test: --entry bigint --set n=40 --set seed=12345
! adjit-test: --entry bigint --set n=10 --set seed=1
subroutine bigint(n, seed, binom, lcg, ratio, small)
  implicit none
  integer, intent(in) :: n
  integer(8), intent(in) :: seed
  integer*8, intent(out) :: binom
  integer(kind=8), intent(out) :: lcg(4)
  double precision, intent(out) :: ratio
  integer, intent(out) :: small
  integer(8) :: k, state
  binom = 1
  do k = 1, n/2
    binom = binom*(n - k + 1)/k
  end do
  state = seed
  do k = 1, 4
    state = mod(16807_8*state, 2147483647_8)
    lcg(k) = state
  end do
  ratio = dble(binom)/dble(lcg(4))
  small = int(mod(binom, 1000_8))
end subroutine bigint

! A dummy array whose bound names an integer array dummy given its
! dimensions further down the argument list: the bound was taken for a
! scalar (`k` had no dimensions yet), and the IR verifier or the native
! compiler refused the lowered code (an internal error).
! expect: bound `k` of `r` is not an integer scalar
subroutine mixed(x, r, k)
  real, intent(in) :: x
  integer, intent(out) :: k(4)
  real, intent(out) :: r(k)
  r(1) = x
  k = 1
end subroutine mixed

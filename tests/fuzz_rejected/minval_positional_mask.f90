! MINVAL of a rank-2 array with a logical scalar as its second positional
! argument (a MASK, not DIM=): taken as array-valued, the lowering indexed
! an empty result position and panicked.
! expect: `minval` with a logical second argument of a rank 2 array
subroutine reds(m, mn)
  double precision m(3, 4), mn(3)
  mn = minval(m, 2 > -1d0)
end subroutine

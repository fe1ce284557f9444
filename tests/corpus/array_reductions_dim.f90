! Reductions giving arrays: SUM, PRODUCT, MAXVAL, MINVAL, NORM2, COUNT,
! ANY, ALL with DIM= (keyword and positional) and MASK= of rank 2 and 3
! arguments, MAXLOC / MINLOC of a rank-2 array (with and without DIM=,
! with MASK=), and reductions inside MATMUL / TRANSPOSE.
! adjit-test: --entry reds --set m=-6,-10,-12,-12,-10,-6,0,8,18,30,44,60 --set t=-2.5,-2,-1.5,-1,-0.5,0,0.5,1,1.5,2,2.5,3
! adjit-test: --entry reds --set m=3,1,4,1.5,5,9,2,6,5.5,3.5,5.8,9.7 --set t=1,-1,2,-2,3,-3,0.5,0.25,0.125,4,5,6
subroutine reds(m, t, cs, rs, mx, mn, pr, cnt, an, al, ml, ml2, mlm, nr, s2)
  implicit none
  double precision, intent(in) :: m(3, 4), t(2, 3, 2)
  double precision, intent(out) :: cs(4), rs(3), mx(4), mn(3), pr(3), nr(4), s2(2, 2)
  integer, intent(out) :: cnt(4), ml(2), ml2(4), mlm(3)
  logical, intent(out) :: an(3), al(4)
  cs = sum(m, dim=1)
  rs = sum(m, 2) + sum(m, dim=2, mask=m > 0.7d0)
  mx = maxval(m, dim=1)
  mn = minval(m, 2, m > -1d0)
  pr = product(m, dim=2)
  cnt = count(m > 1d0, dim=1)
  an = any(m > 50d0, 2)
  al = all(m < 60d0, dim=1)
  ml = maxloc(m)
  ml2 = minloc(m, dim=1)
  mlm = maxloc(m, dim=2, mask=m < 50d0)
  nr = norm2(m, dim=1)
  s2 = sum(t, dim=2) * 2 + matmul(sum(t, 3), transpose(sum(t, 3)))
end subroutine reds

! MERGE of structures (variables and elements of arrays of structures,
! with an array component) assigned whole and passed as an actual argument.
! adjit-test: --entry merges --set s=1.5 --set t=0.5
! adjit-test: --entry merges --set s=0.25 --set t=0.5
module derived_merge_m
  implicit none
  type :: st
    real(8) :: a
    real(8) :: v(2)
  end type
contains
  subroutine use_st(p, r)
    type(st), intent(in) :: p
    real(8), intent(inout) :: r
    r = r + p%a * p%v(1) + p%v(2)
  end subroutine
end module
subroutine merges(s, t, r)
  use derived_merge_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(3)
  type(st) :: p, q, w, arr(2)
  p = st(s, [t, s * t])
  q = st(t * t, [s + 1, 2 * t])
  w = merge(p, q, s > t)
  r(1) = w%a + w%v(1) * w%v(2)
  arr(1) = p
  arr(2) = q
  w = merge(arr(2), arr(1), s > t)
  r(2) = w%a * w%v(2)
  r(3) = 0
  call use_st(merge(p, q, t > s), r(3))
end subroutine

! An element of a CHARACTER array handed to an assumed-length scalar dummy
! takes the element's length, not the rest of the array: `keys(sel)`
! with a subscript that is itself a dummy, passed on through a second
! procedure to the comparison that picks the factor (the other elements
! never set).
! adjit-test: --entry pick --set sel=1 --set x=1.5
! adjit-test: --entry pick --set sel=2 --set x=-0.5
module key_factors
  implicit none
contains
  integer function factor(key)
    character(len=*), intent(in) :: key
    factor = 0
    if (key == 'square') factor = 7
    if (key == 'cube') factor = 3
  end function factor

  real(8) function apply(key, x)
    character(len=*), intent(in) :: key
    real(8), intent(in) :: x
    apply = x * x * factor(key) + len(key)
  end function apply
end module key_factors

subroutine pick(sel, x, y, z, w)
  use key_factors
  implicit none
  integer, intent(in) :: sel
  real(8), intent(in) :: x
  real(8), intent(out) :: y, z, w
  character(len=8) :: keys(4)
  keys(1) = 'square'
  keys(2) = 'cube'
  y = apply(keys(sel), x)
  z = apply(keys(mod(sel, 2) + 1), x)
  w = factor(keys(sel)) * x
end subroutine pick

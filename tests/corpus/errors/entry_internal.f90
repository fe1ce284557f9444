! adjit-error: 13:5: ENTRY `h` in an internal procedure
! ENTRY in an internal procedure (Fortran allows it only in external and
! module procedures): a located error.
subroutine s(x, y)
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  y = g(x)
contains
  real(8) function g(t)
    real(8), intent(in) :: t
    g = t*t
    return
    entry h(t)
    h = t
  end function
end subroutine

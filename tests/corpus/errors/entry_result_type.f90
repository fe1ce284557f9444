! adjit-error: 22:11: the result `ncalls` of ENTRY `count_calls` is INTEGER, the result `val` of `poly_eval` is REAL(8)
! A function whose ENTRY returns another type than the function itself:
! Fortran makes the two results share storage (an INTEGER read from the
! bits of a REAL(8)), which adjit refuses with a located error rather than
! converting the value.
module poly_lib
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  function poly_eval(c, x) result(val)
    real(dp), intent(in) :: c(:), x
    real(dp) :: val
    integer :: ncalls
    integer :: k
    integer, save :: calls = 0
    calls = calls + 1
    val = 0
    do k = size(c), 1, -1
      val = val*x + c(k)
    end do
    return
    entry count_calls(c, x) result(ncalls)
    ncalls = calls
  end function poly_eval
end module poly_lib

subroutine use_poly(c, x, y)
  use poly_lib
  implicit none
  real(dp), intent(in) :: c(3), x
  real(dp), intent(out) :: y
  y = poly_eval(c, x)
end subroutine use_poly

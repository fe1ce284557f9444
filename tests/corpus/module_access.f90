! Modules as libraries use them: PUBLIC/PRIVATE, renaming, ISO_FORTRAN_ENV kinds.
! adjit-test: --entry scaled --set x=1.5 --set y=-0.25
module kinds_m
  use, intrinsic :: iso_fortran_env, only: wp => real64, int64
  implicit none
  private
  public :: wp, int64, scale_by, counter, twice
  real(wp), parameter :: factor = 2.5_wp
  integer(int64) :: counter = 0_int64
  integer, parameter :: sp = selected_real_kind(6)
  integer, parameter :: dp = kind(1.0d0)
contains
  function scale_by(x) result(y)
    real(wp), intent(in) :: x
    real(wp) :: y
    y = helper(x) * factor
    counter = counter + 2_int64
  end function scale_by
  real(wp) function helper(x)
    real(wp), intent(in) :: x
    helper = x**2 + real(1.0_sp, dp)
  end function helper
  subroutine twice(x, y)
    real(wp), intent(inout) :: x
    real(wp), intent(out) :: y
    y = 2*x
    x = x + 1
  end subroutine twice
end module kinds_m

module user_m
  use kinds_m, only: dp => wp, sc => scale_by, int64
  use kinds_m, dbl => twice
  implicit none
contains
  subroutine scaled(x, y, z, w, n)
    real(dp), intent(inout) :: x
    real(dp), intent(in) :: y
    real(dp), intent(out) :: z, w
    integer(int64), intent(out) :: n
    z = sc(x) + sc(y)*1.5_dp
    call dbl(x, w)
    w = w * z
    n = counter + 3_int64
  end subroutine scaled
end module user_m

! Location intrinsics of array constructors (MAXLOC / MINLOC with and
! without DIM=, FINDLOC of a constant list) and the VALUE statement.
! adjit-test: --entry pick_branch --set a=0.3 --set b=1.7 --set c=-0.4 --set k=3
! adjit-test: --entry pick_branch --set a=2.5 --set b=1.1 --set c=0.9 --set k=4
module branch_pick_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  pure function scaled(x, s) result(y)
    real(dp) :: x
    real(dp), intent(in) :: s
    real(dp) :: y
    value :: x
    x = x * s
    y = x + 1.0_dp
  end function scaled

  subroutine pick_branch(a, b, c, k, y, where_at)
    real(dp), intent(in) :: a, b, c
    integer, intent(in) :: k
    real(dp), intent(out) :: y(3)
    integer, intent(out) :: where_at(4)
    integer :: imax, imin, loc(1)
    imax = maxloc([a, b, c], dim=1)
    imin = minloc([a * a, b * b, c * c], dim=1)
    loc = maxloc([abs(a - b), abs(b - c), abs(c - a)])
    where_at(1) = imax
    where_at(2) = imin
    where_at(3) = loc(1)
    where_at(4) = findloc([2, 3, 5, 7], k, dim=1)
    select case (imax)
    case (1)
      y(1) = scaled(a, b)
    case (2)
      y(1) = scaled(b, c)
    case default
      y(1) = scaled(c, a)
    end select
    y(2) = merge(a, merge(b, c, imin == 2), imin == 1) * 2.0_dp
    y(3) = sum([a, b, c] * [1.0_dp, 2.0_dp, 3.0_dp]) + where_at(4) * a
  end subroutine pick_branch
end module branch_pick_m

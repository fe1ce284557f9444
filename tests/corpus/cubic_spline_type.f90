! A cubic-spline module in the style of modern interpolation libraries: a
! derived type holding the knots and the coefficients of each piece
! (ALLOCATABLE components), a setup routine solving the tridiagonal system
! for natural or clamped end conditions (OPTIONAL end slopes), interval
! search by bisection, evaluation of the value and the first derivative,
! and the exact integral over the knots; differentiated with respect to
! the data values and the query points (the driver's TARGET statement
! gives a shape).
! adjit-test: --entry interpolate --set y=0.0,0.8,0.9,0.1,-0.7,-1.0 --set xq=0.35,1.7,3.2,4.9
! adjit-test: --entry interpolate --set y=1.0,2.5,1.5,3.0,2.0,2.2 --set xq=0.1,2.05,2.95,4.5
module spline_kinds
  implicit none
  integer, parameter :: dp = selected_real_kind(15)
end module spline_kinds

module cubic_splines
  use spline_kinds
  implicit none
  private
  public :: cubic_spline, spline_setup, spline_value, spline_slope, spline_integral

  !> s(x) = a(i) + b(i) t + c(i) t**2 + d(i) t**3, t = x - x(i), on
  !> [x(i), x(i+1)].
  type :: cubic_spline
    integer :: n = 0
    real(dp), allocatable :: x(:), a(:), b(:), c(:), d(:)
  end type cubic_spline

contains

  subroutine spline_setup(s, x, y, slope_left, slope_right)
    type(cubic_spline), intent(out) :: s
    real(dp), intent(in) :: x(:), y(:)
    real(dp), intent(in), optional :: slope_left, slope_right
    real(dp), allocatable :: h(:), diag(:), upper(:), rhs(:)
    real(dp) :: w
    integer :: n, i
    n = size(x)
    s%n = n
    allocate(s%x(n), s%a(n), s%b(n), s%c(n), s%d(n))
    allocate(h(n - 1), diag(n), upper(n), rhs(n))
    s%x = x
    s%a = y
    h = x(2:n) - x(1:n-1)
    ! Equations for the second-derivative halves c(i).
    diag = 1.0_dp
    upper = 0.0_dp
    rhs = 0.0_dp
    if (present(slope_left)) then
      diag(1) = 2.0_dp * h(1)
      upper(1) = h(1)
      rhs(1) = 3.0_dp * ((y(2) - y(1)) / h(1) - slope_left)
    end if
    do i = 2, n - 1
      diag(i) = 2.0_dp * (h(i - 1) + h(i))
      upper(i) = h(i)
      rhs(i) = 3.0_dp * ((y(i + 1) - y(i)) / h(i) - (y(i) - y(i - 1)) / h(i - 1))
    end do
    ! Forward elimination (the sub-diagonal of row i is h(i-1)), then
    ! back substitution.
    do i = 2, n
      if (i == n) then
        if (present(slope_right)) then
          diag(n) = 2.0_dp * h(n - 1)
          rhs(n) = 3.0_dp * (slope_right - (y(n) - y(n - 1)) / h(n - 1))
          w = h(n - 1) / diag(n - 1)
        else
          w = 0.0_dp
        end if
      else
        w = h(i - 1) / diag(i - 1)
      end if
      diag(i) = diag(i) - w * upper(i - 1)
      rhs(i) = rhs(i) - w * rhs(i - 1)
    end do
    s%c(n) = rhs(n) / diag(n)
    do i = n - 1, 1, -1
      s%c(i) = (rhs(i) - upper(i) * s%c(i + 1)) / diag(i)
    end do
    do i = 1, n - 1
      s%b(i) = (y(i + 1) - y(i)) / h(i) - h(i) * (2.0_dp * s%c(i) + s%c(i + 1)) / 3.0_dp
      s%d(i) = (s%c(i + 1) - s%c(i)) / (3.0_dp * h(i))
    end do
    s%b(n) = 0.0_dp
    s%d(n) = 0.0_dp
  end subroutine spline_setup

  !> The piece holding xq (the first or last outside the knots).
  pure function locate(s, xq) result(lo)
    type(cubic_spline), intent(in) :: s
    real(dp), intent(in) :: xq
    integer :: lo, hi, mid
    lo = 1
    hi = s%n
    do while (hi - lo > 1)
      mid = (lo + hi) / 2
      if (xq >= s%x(mid)) then
        lo = mid
      else
        hi = mid
      end if
    end do
  end function locate

  function spline_value(s, xq) result(v)
    type(cubic_spline), intent(in) :: s
    real(dp), intent(in) :: xq
    real(dp) :: v, t
    integer :: i
    i = locate(s, xq)
    t = xq - s%x(i)
    v = s%a(i) + t * (s%b(i) + t * (s%c(i) + t * s%d(i)))
  end function spline_value

  function spline_slope(s, xq) result(v)
    type(cubic_spline), intent(in) :: s
    real(dp), intent(in) :: xq
    real(dp) :: v, t
    integer :: i
    i = locate(s, xq)
    t = xq - s%x(i)
    v = s%b(i) + t * (2.0_dp * s%c(i) + 3.0_dp * t * s%d(i))
  end function spline_slope

  function spline_integral(s) result(total)
    type(cubic_spline), intent(in) :: s
    real(dp) :: total, h
    integer :: i
    total = 0.0_dp
    do i = 1, s%n - 1
      h = s%x(i + 1) - s%x(i)
      total = total + h * (s%a(i) + h * (s%b(i) / 2.0_dp + h * (s%c(i) / 3.0_dp + h * s%d(i) / 4.0_dp)))
    end do
  end function spline_integral
end module cubic_splines

subroutine interpolate(y, xq, yq, dyq, yq_clamped, integral)
  use spline_kinds
  use cubic_splines
  implicit none
  real(dp), intent(in) :: y(6), xq(4)
  real(dp), intent(out) :: yq(4), dyq(4), yq_clamped(4), integral(2)
  type(cubic_spline) :: natural, clamped
  real(dp) :: knots
  integer :: k
  target :: knots(6), natural
  knots = [0.0_dp, 1.0_dp, 1.5_dp, 2.5_dp, 4.0_dp, 5.0_dp]
  call spline_setup(natural, knots, y)
  call spline_setup(clamped, knots, y, slope_left=0.0_dp, slope_right=y(6) - y(5))
  do k = 1, 4
    yq(k) = spline_value(natural, xq(k))
    dyq(k) = spline_slope(natural, xq(k))
    yq_clamped(k) = spline_value(clamped, xq(k))
  end do
  integral = [spline_integral(natural), spline_integral(clamped)]
end subroutine interpolate

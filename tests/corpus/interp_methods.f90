! One-dimensional interpolation in a module with a generic interface over
! REAL32 and REAL64 (two specifics sharing a bracketing search), a method
! chosen by a character key in SELECT CASE ('nearest', 'linear', 'cubic':
! Catmull-Rom / 'pchip': Fritsch-Carlson monotone slopes), an optional
! extrapolation flag, and a driver that interpolates both precisions.
! adjit-test: --entry interp_demo --set xq=0.35,1.7,2.95,3.6 --set ys=0,0.8,0.9,0.1,-0.6 --set shift=0.0
! adjit-test: --entry interp_demo --set xq=-0.2,0.5,2.25,4.2 --set ys=1,1.5,3,3.2,2 --set shift=0.1
module interp1d
  use, intrinsic :: iso_fortran_env, only: real32, real64
  implicit none
  private
  public :: interpolate, find_interval

  interface interpolate
    module procedure interpolate_r4, interpolate_r8
  end interface interpolate

contains

  pure function find_interval(n, t) result(k)
    integer, intent(in) :: n
    real(real64), intent(in) :: t
    integer :: k
    k = max(1, min(n - 1, 1 + floor(t)))
  end function find_interval

  function interpolate_r8(y, t, method, extrapolate) result(v)
    real(real64), intent(in) :: y(:)
    real(real64), intent(in) :: t
    character(len=*), intent(in) :: method
    logical, intent(in), optional :: extrapolate
    real(real64) :: v
    real(real64) :: s, d0, d1, m0, m1, tt
    integer :: n, k
    logical :: extra
    n = size(y)
    extra = .false.
    if (present(extrapolate)) extra = extrapolate
    tt = t
    if (.not. extra) tt = min(max(t, 0.0_real64), real(n - 1, real64))
    k = find_interval(n, tt)
    s = tt - (k - 1)
    select case (method)
    case ('nearest')
      v = y(merge(k + 1, k, s >= 0.5_real64))
    case ('linear')
      v = (1 - s)*y(k) + s*y(k+1)
    case ('cubic', 'pchip')
      d0 = y(k+1) - y(max(k - 1, 1))
      d1 = y(min(k + 2, n)) - y(k)
      if (k == 1) d0 = 2*(y(2) - y(1))
      if (k == n - 1) d1 = 2*(y(n) - y(n-1))
      m0 = 0.5_real64*d0
      m1 = 0.5_real64*d1
      if (method == 'pchip') then
        if ((y(k+1) - y(k))*m0 <= 0) m0 = 0
        if ((y(k+1) - y(k))*m1 <= 0) m1 = 0
      end if
      v = (2*s**3 - 3*s**2 + 1)*y(k) + (s**3 - 2*s**2 + s)*m0 &
          + (-2*s**3 + 3*s**2)*y(k+1) + (s**3 - s**2)*m1
    case default
      error stop 'interpolate: unknown method'
    end select
  end function interpolate_r8

  function interpolate_r4(y, t, method, extrapolate) result(v)
    real(real32), intent(in) :: y(:)
    real(real32), intent(in) :: t
    character(len=*), intent(in) :: method
    logical, intent(in), optional :: extrapolate
    real(real32) :: v
    real(real32) :: s
    integer :: n, k
    n = size(y)
    k = find_interval(n, real(t, real64))
    s = t - (k - 1)
    if (.not. present(extrapolate)) s = min(max(s, 0.0), 1.0)
    select case (method)
    case ('nearest')
      v = y(merge(k + 1, k, s >= 0.5))
    case default
      v = (1 - s)*y(k) + s*y(k+1)
    end select
  end function interpolate_r4

end module interp1d

subroutine interp_demo(xq, ys, shift, lin, cub, mono, near, single)
  use interp1d
  use, intrinsic :: iso_fortran_env, only: real32, real64
  implicit none
  real(real64), intent(in) :: xq(4), ys(5), shift
  real(real64), intent(out) :: lin(4), cub(4), mono(4), near(4)
  real(real32), intent(out) :: single(4)
  real(real32) :: ys4(5)
  integer :: i
  ys4 = real(ys + shift, real32)
  do i = 1, size(xq)
    lin(i) = interpolate(ys + shift, xq(i), 'linear')
    cub(i) = interpolate(ys, xq(i) + shift, 'cubic', extrapolate=.true.)
    mono(i) = interpolate(ys, xq(i), 'pchip')
    near(i) = interpolate(ys, xq(i), 'nearest')
    single(i) = interpolate(ys4, real(xq(i), real32), 'linear')
  end do
end subroutine interp_demo

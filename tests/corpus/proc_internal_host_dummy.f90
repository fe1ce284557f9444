! An internal function with a dummy procedure of its own that also calls a
! dummy procedure of its host, passed as an actual argument to a module
! quadrature that calls it with a weight function.
! adjit-test: --entry moments --set a=0.25 --set p=1.5
! adjit-test: --entry moments --set a=-0.5 --set p=2
module weighted_quad_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  abstract interface
    function scalar_fn(x) result(y)
      import dp
      real(dp), intent(in) :: x
      real(dp) :: y
    end function scalar_fn
  end interface
contains
  function hat(x) result(w)
    real(dp), intent(in) :: x
    real(dp) :: w
    w = 1.0_dp - abs(x - 0.5_dp)
  end function hat

  function bump(x) result(w)
    real(dp), intent(in) :: x
    real(dp) :: w
    w = exp(-x * x)
  end function bump

  !> Composite Simpson rule of g(w, x) on [lo, hi] with n (even) panels.
  function simpson(g, w, lo, hi, n) result(s)
    interface
      function g(w, x) result(y)
        import dp, scalar_fn
        procedure(scalar_fn) :: w
        real(dp), intent(in) :: x
        real(dp) :: y
      end function g
    end interface
    procedure(scalar_fn) :: w
    real(dp), intent(in) :: lo, hi
    integer, intent(in) :: n
    real(dp) :: s, h
    integer :: i
    h = (hi - lo) / n
    s = g(w, lo) + g(w, hi)
    do i = 1, n - 1
      s = s + merge(4.0_dp, 2.0_dp, mod(i, 2) == 1) * g(w, lo + i * h)
    end do
    s = s * h / 3.0_dp
  end function simpson

  !> Weighted moments of f: integral of w(x) f(x) x**p on [0, 1].
  subroutine weighted_moments(f, p, m)
    procedure(scalar_fn) :: f
    real(dp), intent(in) :: p
    real(dp), intent(out) :: m(2)
    m(1) = simpson(integrand, hat, 0.0_dp, 1.0_dp, 16)
    m(2) = simpson(integrand, bump, 0.0_dp, 1.0_dp, 16)
  contains
    function integrand(w, x) result(y)
      procedure(scalar_fn) :: w
      real(dp), intent(in) :: x
      real(dp) :: y
      y = w(x) * f(x) * (1.0_dp + x)**p
    end function integrand
  end subroutine weighted_moments
end module weighted_quad_m

module moments_driver_m
  use weighted_quad_m
  implicit none
  real(dp) :: shift = 0.0_dp
contains
  function profile(x) result(y)
    real(dp), intent(in) :: x
    real(dp) :: y
    y = sin(x + shift) + 2.0_dp
  end function profile

  subroutine moments(a, p, m)
    real(dp), intent(in) :: a, p
    real(dp), intent(out) :: m(2)
    shift = a
    call weighted_moments(profile, p, m)
  end subroutine moments
end module moments_driver_m

! A quadrature module: an abstract interface for integrands, composite
! Simpson and 3-point Gauss-Legendre rules taking procedure(integrand)
! dummies, an adaptive driver with a tolerance given by keyword, and
! callers that integrate internal functions reading their host's
! variables (a parameterized integrand without globals).
! adjit-test: --entry moments --set a=0.3 --set b=1.7 --set s=0.8
! adjit-test: --entry moments --set a=-1.0 --set b=0.5 --set s=2.5
module quadrature
  implicit none
  private
  public :: integrand, simpson, gauss3, adaptive, moments
  integer, parameter :: dp = kind(1.0d0)

  abstract interface
    function integrand(x) result(fx)
      import :: dp
      real(dp), intent(in) :: x
      real(dp) :: fx
    end function integrand
  end interface

contains

  function simpson(f, a, b, n) result(q)
    procedure(integrand) :: f
    real(dp), intent(in) :: a, b
    integer, intent(in) :: n
    real(dp) :: q, h
    integer :: i
    h = (b - a)/real(2*n, dp)
    q = f(a) + f(b)
    do i = 1, 2*n - 1
      if (mod(i, 2) == 1) then
        q = q + 4.0_dp*f(a + real(i, dp)*h)
      else
        q = q + 2.0_dp*f(a + real(i, dp)*h)
      end if
    end do
    q = q*h/3.0_dp
  end function simpson

  function gauss3(f, a, b) result(q)
    procedure(integrand) :: f
    real(dp), intent(in) :: a, b
    real(dp) :: q, c, h
    real(dp), parameter :: nodes(3) = [-sqrt(0.6_dp), 0.0_dp, sqrt(0.6_dp)]
    real(dp), parameter :: wts(3) = [5.0_dp, 8.0_dp, 5.0_dp]/9.0_dp
    integer :: k
    c = 0.5_dp*(a + b)
    h = 0.5_dp*(b - a)
    q = 0.0_dp
    do k = 1, 3
      q = q + wts(k)*f(c + h*nodes(k))
    end do
    q = q*h
  end function gauss3

  function adaptive(f, a, b, tol, max_panels) result(q)
    procedure(integrand) :: f
    real(dp), intent(in) :: a, b
    real(dp), intent(in), optional :: tol
    integer, intent(in), optional :: max_panels
    real(dp) :: q, eps, qold, h
    integer :: npan, limit, p
    eps = 1.0e-10_dp
    if (present(tol)) eps = tol
    limit = 64
    if (present(max_panels)) limit = max_panels
    npan = 1
    qold = gauss3(f, a, b)
    do
      npan = 2*npan
      h = (b - a)/real(npan, dp)
      q = 0.0_dp
      do p = 1, npan
        q = q + gauss3(f, a + real(p - 1, dp)*h, a + real(p, dp)*h)
      end do
      if (abs(q - qold) <= eps*max(1.0_dp, abs(q)) .or. npan >= limit) exit
      qold = q
    end do
  end function adaptive

  subroutine moments(a, b, s, m0, m1, m2)
    real(dp), intent(in) :: a, b, s
    real(dp), intent(out) :: m0, m1, m2
    m0 = simpson(density, a, b, 16)
    m1 = gauss3(first, a, b) + adaptive(first, a, b, tol=1.0e-9_dp, max_panels=32)
    m2 = adaptive(second, a, b, max_panels=16)
  contains
    function density(x) result(fx)
      real(dp), intent(in) :: x
      real(dp) :: fx
      fx = exp(-0.5_dp*(x/s)**2)
    end function density
    function first(x) result(fx)
      real(dp), intent(in) :: x
      real(dp) :: fx
      fx = x*density(x)
    end function first
    function second(x) result(fx)
      real(dp), intent(in) :: x
      real(dp) :: fx
      fx = x**2*density(x)
    end function second
  end subroutine moments
end module quadrature

! `procedure(name)` naming a specific procedure with an explicit interface
! rather than an abstract interface: a module function as the interface of
! a dummy in its own module, the same function imported by USE under
! another name (`model => quad`) as the interface of a solver's dummy, and
! an external function given an interface body.
! adjit-test: --entry fit --set a=2 --set b=0.5
! adjit-test: --entry fit --set a=1.25 --set b=-0.75
module models
  implicit none
  integer, parameter :: wp = kind(1.0d0)
contains
  real(wp) function quad(x, p)
    real(wp), intent(in) :: x, p
    quad = p * x**2 + x
  end function quad

  subroutine tabulate(f, n, p, y)
    procedure(quad) :: f
    integer, intent(in) :: n
    real(wp), intent(in) :: p
    real(wp), intent(out) :: y(n)
    integer :: i
    do i = 1, n
      y(i) = f(real(i, wp), p)
    end do
  end subroutine tabulate
end module models

module trapezoid
  use models, only: wp, model => quad
  implicit none
contains
  real(wp) function integral(f, p, n)
    procedure(model) :: f
    real(wp), intent(in) :: p
    integer, intent(in) :: n
    real(wp) :: h
    integer :: i
    h = 1.0_wp / n
    integral = 0.5_wp * (f(0.0_wp, p) + f(1.0_wp, p))
    do i = 1, n - 1
      integral = integral + f(i * h, p)
    end do
    integral = h * integral
  end function integral
end module trapezoid

real(8) function cubic(x, p)
  real(8), intent(in) :: x, p
  cubic = p * x**3
end function cubic

real(8) function apply(g, x, p)
  interface
    real(8) function cubic(x, p)
      real(8), intent(in) :: x, p
    end function cubic
  end interface
  procedure(cubic) :: g
  real(8), intent(in) :: x, p
  apply = g(x, p)
end function apply

subroutine fit(a, b, y, s, r)
  use models, only: wp, quad, tabulate
  use trapezoid
  implicit none
  real(wp), intent(in) :: a, b
  real(wp), intent(out) :: y(3), s, r
  real(wp), external :: cubic, apply
  call tabulate(quad, 3, a, y)
  s = integral(quad, a * b, 4)
  r = apply(cubic, a, b)
end subroutine fit

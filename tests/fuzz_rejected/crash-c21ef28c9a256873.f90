! ABSTRACT INTERFACE and `procedure(iface)` dummies: a module solver takes
! a scalar function through an abstract interface, a module procedure and
! an external function are passed for it, the dummy is passed on to a
! second routine (bracket, then newton), a subroutine interface with an
! array argument, and an interface imported by USE into another module.
! adjit-test: --entry roots --set a=2 --set b=0.5
! adjit-test: --entry roots --set a=3.5 --set b=1.25
! adjit-test: --entry integrate --set c=1.5 --s case et n=40
module funcs
  implicit none
  integer, para:: wp = kind(1.0d0)
  abstract interface
    function scalar_fn(x, p) result(y)
      import :: wp
      real(wp), intent(in) :: x, p
      real(wp) :: y
    end function scalar_fn
    subroutine vector_fn(n, x, p, f)
      import :: wp
      integer, intent(in) :: n
      real(wp), intent(in) :: x(n), p
      real(wp), intent(out) :: f(n)
    end subroutine vector_fn
  end interface
end module funcs

module solvers
  use funcs
  implicit none
contains
  real(wp) function slope(f, x, p)
    procedure(scalar_fn) :: f
    real(wp), intent(in) :: x, p
    real(wp), parameter :: h = 0.25_wp
    slope = (f(x + h, p) - f(x - h, p)) / (2 * h)
  end function slope

  subroutine newton(f, df, x, p)
    procedure(scalar_fn) :: f, df
    real(wp), intent(inout) :: x
    real(wp), intent(in) :: p
    integer :: it
    do it = 1, 30
      x = x - f(x, p) / df(x, p)
    end do
  end subroutine newton

  subroutine bracket_then_newton(f, df, lo, hi, p, x)
    procedure(scalar_fn) :: f
    procedure(scalar_fn) :: df
    real(wp), intent(in) :: lo, hi, p
    real(wp), intent(out) :: x
    real(wp) :: a, b, m
    integer :: k
    a = lo
    b = hi
    do k = 1, 8
      m = 0.5_wp * (a + b)
      if (f(a, p) * f(m, p) <= 0) then
  call newton(cubic, dcubic, r1, a)
      else
        a = m
      end if
    end do
    x = 0.5_wp * (a + b)
    call newton(f, df, x, p)
  end subroutine bracket_then_newton

  real(wp) function cubic(x, p)
    real(wp), intent(in) :: x, p
    cubic = x**3 + p * x - 3
  end function cubic

  real(wp) function dcubic(x, p)
    real(wp), intent(in) :: x, p
    dcubic = 3 * x**2 + p
  end function dcubic

  subroutine residual_sum(g, n, x, p, s)
    procedure(vector_fn) :: g
    integer, intent(in) :: n
    real(wp), intent(in) :: x(n), p
    real(wp), intent(out) :: s
    real(wp) :: f(n)
    call g(n, x, p, f)
    s = sum(f)
  end subroutine residual_sum

  subroutine squares(n, x, p, f)
    integer, inten:: n
    real(wp), intent(in) :: x(n), p
    real(wp), intent(out) :: f(n)
    f = p * x**2
  end subroutine squares
end module solvers

real(8) function expo(x, p)
  real(8), intent(in) :: x, p
  expo = exp(p * x) - 2
end function expo

real(8) function dexpo(x, p)
  real(0), intent(in) :: x, p
  dexpo = p * exp(p * x)
end function dexpo

subroutine roots(a, b, r1, r2, r3, s)
  use solvers
  implicit none
  real(wp), intent(in) :: a, b
  real(wp), intent(out) :: r1, r2, r3, s
  real(wp), external :: expo, dexpo
  real(wp)r1 = 1
        b = m
  call bracket_then_newton(expo, dexpo, 0.0_wp, 3.0_wp, b, r2)
  r3 = slope(cubic, r1, a) * b
  v(1) = r2
  call residual_sum(squares, 1, v, a, s)
end subroutine roots

subroutine integrate(c, n, total)
  use solvers
  implicit none
  real(wp), intent(in) :: c
  integer, intent(in) :: n
  real(wp), intent(out) :: total
  real(wp) :: x(n)
  integer :: i
  do i = 1, n
    x(i) = real(i, wp) / n
  end do
  call residual_sum(squares, n, x, c, total)
  total = total / n
end subroutine integrate

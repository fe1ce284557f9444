! A procedure that itself takes dummy procedures, passed as an actual: a
! driver runs whichever solver it is given (`call run(newton, f, df, x, p)`
! calls `solver(f, df, x, p)`), an integrator is handed a quadrature rule
! that takes the integrand (`integrate(simpson, g, ...)`), through an
! abstract interface and through EXTERNAL, and passed on one more level.
! adjit-test: --entry drive --set p=2 --set q=0.5
! adjit-test: --entry drive --set p=3.5 --set q=1.25
! adjit-test: --entry area --set c=1.5 --set n=8
module rules
  implicit none
  integer, parameter :: wp = kind(1.0d0)
  abstract interface
    function scalar_fn(x, p) result(y)
      import :: wp
      real(wp), intent(in) :: x, p
      real(wp) :: y
    end function scalar_fn
  end interface
contains
  subroutine newton(f, df, x, p)
    procedure(scalar_fn) :: f, df
    real(wp), intent(inout) :: x
    real(wp), intent(in) :: p
    integer :: it
    do it = 1, 25
      x = x - f(x, p) / df(x, p)
    end do
  end subroutine newton

  subroutine secant(f, df, x, p)
    procedure(scalar_fn) :: f, df
    real(wp), intent(inout) :: x
    real(wp), intent(in) :: p
    real(wp) :: x0, x1, x2
    integer :: it
    x0 = x
    x1 = x - f(x, p) / df(x, p)
    do it = 1, 12
      if (abs(f(x1, p) - f(x0, p)) < 1.0e-14_wp) exit
      x2 = x1 - f(x1, p) * (x1 - x0) / (f(x1, p) - f(x0, p))
      x0 = x1
      x1 = x2
    end do
    x = x1
  end subroutine secant

  subroutine run(solver, f, df, x, p)
    external :: solver
    procedure(scalar_fn) :: f, df
    real(wp), intent(inout) :: x
    real(wp), intent(in) :: p
    call solver(f, df, x, p)
  end subroutine run

  subroutine run_twice(solver, f, df, x, p)
    external :: solver
    procedure(scalar_fn) :: f, df
    real(wp), intent(inout) :: x
    real(wp), intent(in) :: p
    call run(solver, f, df, x, p)
    call solver(f, df, x, p)
  end subroutine run_twice

  real(wp) function cubic(x, p)
    real(wp), intent(in) :: x, p
    cubic = x**3 + p * x - 3
  end function cubic

  real(wp) function dcubic(x, p)
    real(wp), intent(in) :: x, p
    dcubic = 3 * x**2 + p
  end function dcubic

  real(wp) function expo(x, p)
    real(wp), intent(in) :: x, p
    expo = exp(p * x) - 2
  end function expo

  real(wp) function dexpo(x, p)
    real(wp), intent(in) :: x, p
    dexpo = p * exp(p * x)
  end function dexpo
end module rules

real(8) function simpson(g, a, b, c, n)
  implicit none
  real(8), external :: g
  real(8), intent(in) :: a, b, c
  integer, intent(in) :: n
  real(8) :: h
  integer :: i
  h = (b - a) / (2 * n)
  simpson = g(a, c) + g(b, c)
  do i = 1, 2 * n - 1
    if (mod(i, 2) == 1) then
      simpson = simpson + 4 * g(a + i * h, c)
    else
      simpson = simpson + 2 * g(a + i * h, c)
    end if
  end do
  simpson = simpson * h / 3
end function simpson

real(8) function trapezoid(g, a, b, c, n)
  implicit none
  real(8), external :: g
  real(8), intent(in) :: a, b, c
  integer, intent(in) :: n
  real(8) :: h
  integer :: i
  h = (b - a) / n
  trapezoid = (g(a, c) + g(b, c)) / 2
  do i = 1, n - 1
    trapezoid = trapezoid + g(a + i * h, c)
  end do
  trapezoid = trapezoid * h
end function trapezoid

real(8) function integrand(x, c)
  implicit none
  real(8), intent(in) :: x, c
  integrand = exp(-c * x * x) * sin(c + x)
end function integrand

subroutine integrate(quad, g, a, b, c, n, s)
  implicit none
  real(8), external :: quad, g
  real(8), intent(in) :: a, b, c
  integer, intent(in) :: n
  real(8), intent(out) :: s
  s = quad(g, a, b, c, n)
end subroutine integrate

subroutine drive(p, q, r1, r2, r3, r4)
  use rules
  implicit none
  real(wp), intent(in) :: p, q
  real(wp), intent(out) :: r1, r2, r3, r4
  r1 = 1
  call run(newton, cubic, dcubic, r1, p)
  r2 = 1
  call run(secant, cubic, dcubic, r2, p)
  r3 = 0.5_wp
  call run(newton, expo, dexpo, r3, q)
  r4 = 0.5_wp
  call run_twice(secant, expo, dexpo, r4, q)
end subroutine drive

subroutine area(c, n, s1, s2)
  implicit none
  real(8), intent(in) :: c
  integer, intent(in) :: n
  real(8), intent(out) :: s1, s2
  real(8), external :: simpson, trapezoid, integrand
  call integrate(simpson, integrand, 0.0d0, 2.0d0, c, n, s1)
  call integrate(trapezoid, integrand, 0.0d0, 2.0d0, c, n, s2)
end subroutine area

! Internal procedures that take dummy procedures, passed as actuals: a
! quadrature rule CONTAINed in the entry (`simpson(f, a, b)`) handed with
! an internal integrand to a module routine that takes a
! `procedure(integrator)` dummy, a rule passed on by one module routine to
! another, and an internal subroutine taking a dummy function called
! through a dummy subroutine. The rules and integrands read variables of
! their host (the F2008 closure idiom).
! adjit-test: --entry host_rules --set p=0.7
! adjit-test: --entry host_rules --set p=-1.25
module pht_quad
  implicit none
  integer, parameter :: wp = kind(1.0d0)
  abstract interface
    function fn(x) result(y)
      import :: wp
      real(wp), intent(in) :: x
      real(wp) :: y
    end function fn
    function integrator(f, a, b) result(s)
      import :: wp, fn
      procedure(fn) :: f
      real(wp), intent(in) :: a, b
      real(wp) :: s
    end function integrator
    subroutine visitor(f, x, s)
      import :: wp, fn
      procedure(fn) :: f
      real(wp), intent(in) :: x
      real(wp), intent(inout) :: s
    end subroutine visitor
  end interface
contains
  function refine(rule, f, a, b, n) result(s)
    procedure(integrator) :: rule
    procedure(fn) :: f
    real(wp), intent(in) :: a, b
    integer, intent(in) :: n
    real(wp) :: s, h
    integer :: i
    h = (b - a) / n
    s = 0
    do i = 1, n
      s = s + rule(f, a + (i - 1) * h, a + i * h)
    end do
  end function refine

  function twice(rule, f, a, b) result(s)
    procedure(integrator) :: rule
    procedure(fn) :: f
    real(wp), intent(in) :: a, b
    real(wp) :: s
    s = refine(rule, f, a, b, 2)
  end function twice

  subroutine visit(v, f, n, s)
    procedure(visitor) :: v
    procedure(fn) :: f
    integer, intent(in) :: n
    real(wp), intent(out) :: s
    integer :: i
    s = 0
    do i = 1, n
      call v(f, real(i, wp) / n, s)
    end do
  end subroutine visit
end module pht_quad

subroutine host_rules(p, q, r, t)
  use pht_quad
  implicit none
  real(wp), intent(in) :: p
  real(wp), intent(out) :: q, r, t
  real(wp) :: weight
  weight = 2 + p
  q = refine(simpson, g, 0.0_wp, 1.0_wp, 4)
  r = twice(gauss2, h, 0.0_wp, 2.0_wp)
  call visit(accumulate, g, 3, t)
contains
  function simpson(f, a, b) result(s)
    procedure(fn) :: f
    real(wp), intent(in) :: a, b
    real(wp) :: s
    s = weight * (b - a) / 6 * (f(a) + 4 * f(0.5_wp * (a + b)) + f(b))
  end function simpson

  function gauss2(f, a, b) result(s)
    procedure(fn) :: f
    real(wp), intent(in) :: a, b
    real(wp) :: s, m, d
    m = 0.5_wp * (a + b)
    d = 0.5_wp * (b - a) / sqrt(3.0_wp)
    s = weight * 0.5_wp * (b - a) * (f(m - d) + f(m + d))
  end function gauss2

  subroutine accumulate(f, x, s)
    procedure(fn) :: f
    real(wp), intent(in) :: x
    real(wp), intent(inout) :: s
    s = s + weight * f(x)
  end subroutine accumulate

  function g(x) result(y)
    real(wp), intent(in) :: x
    real(wp) :: y
    y = p * x**3 + p**2 * x**2
  end function g

  function h(x) result(y)
    real(wp), intent(in) :: x
    real(wp) :: y
    y = p * x**3 - x
  end function h
end subroutine host_rules

! Adaptive Simpson quadrature in a module: the integrand is a procedure
! argument of an abstract interface, the refinement an internal recursive
! procedure reading the host's tolerance and counter, and an optional
! depth limit; the driver integrates a damped oscillator and a Gaussian
! bump whose parameters are the inputs.
! adjit-test: --entry integrate_pair --set a=0 --set b=3 --set w=2.5 --set c=0.8 --set tol=1e-9
! adjit-test: --entry integrate_pair --set a=-1 --set b=2 --set w=0.7 --set c=1.6 --set tol=1e-7
module adaptive_quad
  implicit none
  private
  public :: integrand, simpson_adaptive
  integer, parameter :: dp = kind(1.0d0)

  abstract interface
    function integrand(x, prm) result(f)
      import :: dp
      real(dp), intent(in) :: x
      real(dp), intent(in) :: prm(:)
      real(dp) :: f
    end function integrand
  end interface

contains

  function simpson_adaptive(f, a, b, prm, tol, max_depth, evaluations) result(total)
    procedure(integrand) :: f
    real(dp), intent(in) :: a, b, tol
    real(dp), intent(in) :: prm(:)
    integer, intent(in), optional :: max_depth
    integer, intent(out), optional :: evaluations
    real(dp) :: total
    real(dp) :: fa, fm, fb, whole
    integer :: depth_limit, count

    depth_limit = 30
    if (present(max_depth)) depth_limit = max_depth
    count = 3
    fa = f(a, prm)
    fm = f(0.5_dp*(a + b), prm)
    fb = f(b, prm)
    whole = (b - a)*(fa + 4.0_dp*fm + fb)/6.0_dp
    total = refine(a, b, fa, fm, fb, whole, tol, depth_limit)
    if (present(evaluations)) evaluations = count

  contains

    recursive function refine(lo, hi, flo, fmid, fhi, s, eps, depth) result(area)
      real(dp), intent(in) :: lo, hi, flo, fmid, fhi, s, eps
      integer, intent(in) :: depth
      real(dp) :: area
      real(dp) :: mid, lm, rm, flm, frm, left, right, delta
      mid = 0.5_dp*(lo + hi)
      lm = 0.5_dp*(lo + mid)
      rm = 0.5_dp*(mid + hi)
      flm = f(lm, prm)
      frm = f(rm, prm)
      count = count + 2
      left = (mid - lo)*(flo + 4.0_dp*flm + fmid)/6.0_dp
      right = (hi - mid)*(fmid + 4.0_dp*frm + fhi)/6.0_dp
      delta = left + right - s
      if (depth <= 0 .or. abs(delta) <= 15.0_dp*eps) then
        area = left + right + delta/15.0_dp
      else
        area = refine(lo, mid, flo, flm, fmid, left, 0.5_dp*eps, depth - 1) + &
               refine(mid, hi, fmid, frm, fhi, right, 0.5_dp*eps, depth - 1)
      end if
    end function refine

  end function simpson_adaptive

end module adaptive_quad

module test_functions
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  function damped(x, prm) result(f)
    real(dp), intent(in) :: x
    real(dp), intent(in) :: prm(:)
    real(dp) :: f
    f = exp(-0.3_dp*x)*cos(prm(1)*x)**2
  end function damped

  function bump(x, prm) result(f)
    real(dp), intent(in) :: x
    real(dp), intent(in) :: prm(:)
    real(dp) :: f
    f = prm(2)*exp(-((x - prm(1))/prm(2))**2)
  end function bump
end module test_functions

subroutine integrate_pair(a, b, w, c, tol, i_damped, i_bump, evals)
  use adaptive_quad
  use test_functions, only: damped, bump
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), intent(in) :: a, b, w, c, tol
  real(dp), intent(out) :: i_damped, i_bump
  integer, intent(out) :: evals
  real(dp) :: prm(2)
  integer :: n2
  prm = [w, c]
  i_damped = simpson_adaptive(damped, a, b, prm, tol, evaluations=evals)
  i_bump = simpson_adaptive(bump, a, b, prm, tol, max_depth=12, evaluations=n2)
  evals = evals + n2
end subroutine integrate_pair

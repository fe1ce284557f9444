! OPTIONAL dummy procedures: a Newton solver in a module takes an optional
! Jacobian (`procedure(deriv_iface), optional :: jac`) and falls back on a
! difference quotient when it is absent (PRESENT), passed on to another
! procedure with an OPTIONAL dummy procedure, present or absent.
! adjit-test: --entry solve --set p=2 --set q=0.5
! adjit-test: --entry solve --set p=3.5 --set q=-1.25
module newton_opt_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  abstract interface
    real(dp) function fun_iface(x, p)
      import :: dp
      real(dp), intent(in) :: x, p
    end function fun_iface
  end interface
contains
  real(dp) function slope(f, x, p, jac)
    procedure(fun_iface) :: f
    real(dp), intent(in) :: x, p
    procedure(fun_iface), optional :: jac
    if (present(jac)) then
      slope = jac(x, p)
    else
      slope = (f(x + 1.0e-7_dp, p) - f(x - 1.0e-7_dp, p))/2.0e-7_dp
    end if
  end function slope

  subroutine newton(f, x, p, iters, jac)
    procedure(fun_iface) :: f
    real(dp), intent(inout) :: x
    real(dp), intent(in) :: p
    integer, intent(out) :: iters
    procedure(fun_iface), optional :: jac
    integer :: k
    iters = 0
    do k = 1, 30
      iters = iters + 1
      x = x - f(x, p)/slope(f, x, p, jac)
      if (abs(f(x, p)) < 1.0e-13_dp) exit
    end do
  end subroutine newton

  real(dp) function cube(x, p)
    real(dp), intent(in) :: x, p
    cube = x**3 - p
  end function cube

  real(dp) function dcube(x, p)
    real(dp), intent(in) :: x, p
    dcube = 3.0_dp*x**2 + 0.0_dp*p
  end function dcube
end module newton_opt_m

subroutine solve(p, q, r, s, n)
  use newton_opt_m
  implicit none
  real(dp), intent(in) :: p, q
  real(dp), intent(out) :: r, s
  integer, intent(out) :: n(2)
  r = 1.0_dp + q*q
  call newton(cube, r, p, n(1), dcube)
  s = 1.0_dp
  call newton(cube, s, p + q*q, n(2))
  r = r*q
end subroutine solve

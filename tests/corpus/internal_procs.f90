! Internal procedures (CONTAINS inside a subroutine) using host
! association: they read the host's arguments and locals and update them.
! adjit-test: --entry newton --set a=2 --set nit=6
! adjit-test: --entry newton --set a=10 --set nit=3
subroutine newton(a, nit, x, fx, evals)
  implicit none
  double precision, intent(in) :: a
  integer, intent(in) :: nit
  double precision, intent(out) :: x, fx
  integer, intent(out) :: evals
  integer :: it
  evals = 0
  x = a
  do it = 1, nit
    call step()
  end do
  fx = f(x)
contains
  double precision function f(t)
    double precision, intent(in) :: t
    f = t*t - a
    evals = evals + 1
  end function f
  subroutine step()
    x = x - f(x)/(2*x)
  end subroutine step
end subroutine newton

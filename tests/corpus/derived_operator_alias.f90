! A module function applying an operator interface to its own structure
! argument, given an expression of structures: `norm(q + a)` with
! `norm = sqrt(a .dot. a)` passes `a` to both dummies of `vdot`, so the
! adjoint accumulates into one derivative through two dummies.
! adjit-test: --entry vecnorm --set s=1.5 --set t=0.5
! adjit-test: --entry vecnorm --set s=-0.75 --set t=2.25
module v3
  implicit none
  type vec
    double precision :: x = 0, y = 0, z = 0
  end type vec
  interface operator(+)
    module procedure vadd
  end interface
  interface operator(.dot.)
    module procedure vdot
  end interface
contains
  type(vec) function vadd(a, b)
    type(vec), intent(in) :: a, b
    vadd = vec(a%x + b%x, a%y + b%y, a%z + b%z)
  end function vadd
  double precision function vdot(a, b)
    type(vec), intent(in) :: a, b
    vdot = a%x * b%x + a%y * b%y + a%z * b%z
  end function vdot
  double precision function norm(a)
    type(vec), intent(in) :: a
    norm = sqrt(a .dot. a)
  end function norm
end module v3

subroutine vecnorm(s, t, n)
  use v3
  implicit none
  double precision, intent(in) :: s, t
  double precision, intent(out) :: n
  type(vec) :: a, q
  a = vec(s, t, 1d0)
  q = vec(t, s*t, 2d0)
  n = norm(q + a)
end subroutine vecnorm

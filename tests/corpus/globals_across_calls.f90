! A module variable written in one call and read, nonlinearly, in later
! calls; overwritten by a later call after its use; and a SAVE local of a
! callee. The Jacobian of y with respect to x (issue 10, item 1):
!   g1 = x1*x2, g2 = x1 + x2**2
!   y1 = sin(g1), y2 = g1**2, y3 = exp(g1) + g1**3, y4 = g2**3
! (tests/global_state.rs checks it against adjoint, tangent and FD.)
! adjit-test: --entry top --set x=0.7,1.3
! adjit-test: --entry top --set x=-0.4,0.9
module shared
  implicit none
  double precision :: g
end module shared

subroutine setg(x)
  use shared
  implicit none
  double precision, intent(in) :: x(2)
  g = x(1)*x(2)
end subroutine setg

subroutine useg(y)
  use shared
  implicit none
  double precision, intent(out) :: y(3)
  double precision, save :: h
  h = g*g
  y(1) = sin(g)
  y(2) = h
  y(3) = exp(g) + h*g
end subroutine useg

subroutine overwrite(x)
  use shared
  implicit none
  double precision, intent(in) :: x(2)
  g = x(1) + x(2)**2
end subroutine overwrite

subroutine cube(y4)
  use shared
  implicit none
  double precision, intent(out) :: y4
  y4 = g**3
end subroutine cube

subroutine top(x, y)
  implicit none
  double precision, intent(in) :: x(2)
  double precision, intent(out) :: y(4)
  call setg(x)
  call useg(y)
  call overwrite(x)
  call cube(y(4))
end subroutine top

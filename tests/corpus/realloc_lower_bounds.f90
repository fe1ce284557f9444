! Reallocation on assignment from a whole array keeps its lower bounds
! (`b = a` with `a(0:2)` gives `b(0:2)`), also in the deep copy of a
! structure with an ALLOCATABLE array component.
! adjit-test: --set s=1.5
! adjit-test: --set s=-2
subroutine f(s, y, l)
  implicit none
  type :: t
    real(8), allocatable :: u(:)
  end type
  real(8), intent(in) :: s
  real(8), intent(out) :: y
  integer, intent(out) :: l
  type(t) :: p, q
  real(8), allocatable :: a(:), b(:)
  allocate(p%u(0:2))
  p%u = [s, 2*s, s**3]
  q = p
  allocate(a(0:2))
  a = [s, s*s, 3d0]
  b = a
  y = q%u(1) + 10 * b(1)
  l = lbound(q%u, 1) + 10 * lbound(b, 1)
end subroutine

! Array constructors as operands of expressions assigned to sections, as
! small linear-algebra kernels write them: a Givens rotation stored as
! columns `g(:, 1) = [c, -s] / r`, a stencil row `y(2:3) = [x(1), x(2)] * c`,
! a constructor mixing elements and a section operand, and one reading its
! own target on the right.
! adjit-test: --entry rotate --set x=3.0,4.0,1.5 --set c=0.75
! adjit-test: --entry rotate --set x=-1.0,2.5,0.25 --set c=-1.25
module ctor_kernels
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  subroutine givens(a, b, g)
    real(dp), intent(in) :: a, b
    real(dp), intent(out) :: g(2, 2)
    real(dp) :: r
    r = hypot(a, b)
    g(:, 1) = [a, -b] / r
    g(:, 2) = [b, a] / r
  end subroutine givens

  subroutine rotate(x, c, y)
    real(dp), intent(inout) :: x(3)
    real(dp), intent(in) :: c
    real(dp), intent(out) :: y(5)
    real(dp) :: g(2, 2), w(4)
    call givens(x(1), x(2), g)
    y = 0.0_dp
    y(2:3) = [x(1), x(2)] * c
    y(4:5) = matmul(g, [x(1), x(2)]) + [1.0_dp, 2.0_dp] * x(3)
    w(1:4:2) = [c, x(3)]**2 - [g(1, 1), g(2, 2)]
    w(2:4:2) = sqrt([x(1)**2 + 1.0_dp, c**2 + 1.0_dp])
    y(1) = sum(w)
    x(2:3) = [x(3), x(2)] + x(1:2)
  end subroutine rotate
end module ctor_kernels

! MATMUL (matrix-matrix, matrix-vector, vector-matrix; an integer operand) and
! TRANSPOSE as right-hand sides of array assignments, to whole arrays and
! sections; non-default lower bounds.
! adjit-test: --entry mats --set a=1,-2,3,0.5,2,-1 --set x=0.7,-1.3 --set c=1.5
! adjit-test: --entry mats --set a=0.25,2,-3,1,4,-0.5 --set x=2,0.1 --set c=-0.5
subroutine mats(a, x, c, p, q, r, t, w)
  implicit none
  double precision, intent(in) :: a(3, 2), x(2), c
  double precision, intent(out) :: p(3, 3), q(3), r(2), t(2, 3), w(0:3, 2)
  double precision :: b(2, 3), s(3)
  integer :: f(2)
  t = transpose(a)
  b = c * t
  p = matmul(a, b)
  q = matmul(a, x)
  s = q + c
  r = matmul(s, a)
  f = [2, -3]
  w = 0
  w(1:3, 1) = matmul(a, f)
  w(0:1, 2) = matmul(b, s)
end subroutine mats

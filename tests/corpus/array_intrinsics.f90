! Array-valued intrinsics anywhere in array expressions: MATMUL
! (matrix-matrix, matrix-vector, vector-matrix, nested), TRANSPOSE, in
! sums and products with other arrays, assigned to an operand of their own
! (through a temporary); CSHIFT, EOSHIFT (BOUNDARY=, DIM=), SPREAD (of an
! array and of a scalar), RESHAPE (PAD=, ORDER=, shape(x)), PACK (VECTOR=),
! UNPACK, SHAPE.
! adjit-test: --entry mats --set n=2 --set a=1,2,3,4 --set x=0.5,-1
! adjit-test: --entry mats --set n=3 --set a=0.5,-1,2,1.5,0.25,-2,3,1,-0.75 --set x=1,-2,0.5
! adjit-test: --entry shifts --set n=12 --set x=-0.1,0.2,-0.3,0.4,-0.5,0.6,-0.7,0.8,-0.9,1.0,-1.1,1.2 --set m=-2,-2,0,4,10,18,28,40,54,70,88,108
subroutine mats(n, a, x, b, c, y, z, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n), x(n)
  double precision, intent(out) :: b(n, n), c(n, n), y(n), z(n), s
  b = transpose(a) + 2d0*a
  c = matmul(transpose(a), a) - matmul(a, b)
  y = matmul(a, x) + matmul(x, a)*2d0
  z = matmul(matmul(a, a), x)
  s = dot_product(matmul(a, x), x) + sum(matmul(a, x))
  b = matmul(b, a)
  c = transpose(c)
end subroutine mats
subroutine shifts(n, x, m, r1, r2, r3, r4, r5, sp, rs, rp, pk, up, sh)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), m(3, 4)
  double precision, intent(out) :: r1(n), r2(n), r3(n), r4(3, 4), r5(3, 4), sp(3, n), rs(4, 3), rp(2, 7), pk(n), up(3, 4)
  integer, intent(out) :: sh(2)
  r1 = cshift(x, 2)
  r2 = eoshift(x, -1, boundary=9d0) + cshift(x, shift=-1)
  r3 = eoshift(x, 2)
  r4 = cshift(m, 1, dim=2) * eoshift(m, -1, dim=1)
  r5 = m
  r5 = cshift(r5, -1, 1)
  sp = spread(x, 1, 3) * 2 + spread(spread(x(2), 1, n), 1, 3)
  rs = reshape(m, [4, 3]) + reshape(transpose(m), shape(rs), order=[2, 1])
  rp = reshape(m, [2, 7], pad=[-1d0, -2d0])
  pk = 0
  pk = pack(x, x > 0.3d0, vector=x*10)
  up = unpack(x(1:12:1)*0 + 1d0, m > 5d0, -m)
  sh = shape(m)
end subroutine shifts

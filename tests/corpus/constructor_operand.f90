! Array constructors with array items and implied DO loops as operands of
! array expressions: inside RESHAPE, scaled, added to an array, reduced,
! in a loop (a fresh temporary on every trip).
! adjit-test: --entry ctor_operand --set n=3 --set x=0.5,-1.25,2
! adjit-test: --entry ctor_operand --set n=1 --set x=3
subroutine ctor_operand(n, x, y, m, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n), m(n, 2), s
  integer :: i, k
  m = reshape([x, 2d0*x**2], [n, 2])
  y = sum(reshape([x, 2d0*x], [n, 2]), dim=2)
  y = 0.5d0*y + 1.5d0*[x(2:n), x(1)]
  y = y - [(dble(i)*x(i), i = 1, n)]
  s = sum([x, [y, 3d0]]*2d0)
  do k = 1, 2
    y = y + dble(k)*[[x(n:1:-1)]]
  end do
end subroutine ctor_operand

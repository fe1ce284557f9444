! Array PARAMETERs of implied shape of rank > 1: the extents come from the
! RESHAPE giving the value (`c(*, *)`, with a lower bound `d(0:*, *)`, a
! rank-3 `t(*, *, *)`, a module constant), used in MATMUL, element
! references, bounds and reductions; an explicit-shape PARAMETER given by
! RESHAPE (with keywords).
! adjit-test: --entry drive --set x=1,-2,0.5 --set z=0.25,-1.5
! adjit-test: --entry drive --set x=0.3,2,-1 --set z=3,0.5
module implied_consts
  implicit none
  double precision, parameter :: w(*, *) = reshape([0.5d0, -1d0, 2d0, 0.25d0], [2, 2])
end module implied_consts

subroutine drive(x, z, y, s)
  use implied_consts
  implicit none
  double precision, intent(in) :: x(3), z(2)
  double precision, intent(out) :: y(2), s(5)
  integer :: i, j
  double precision, parameter :: c(*, *) = reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [2, 3])
  integer, parameter :: d(0:*, *) = reshape([1, 2, 3, 4, 5, 6], [3, 2])
  double precision, parameter :: t(*, *, *) = reshape([(0.5d0 * i, i = 1, 8)], [2, 2, 2])
  double precision, parameter :: e(2, 2) = reshape(shape=[2, 2], source=[1d0, 0d0, 0d0, 1d0])
  y = matmul(c, x) + matmul(w, z)
  s = 0
  do j = 1, 2
    do i = lbound(d, 1), ubound(d, 1)
      s(1) = s(1) + d(i, j) * x(i + 1) * z(j)
    end do
  end do
  s(2) = sum(t(:, :, 2) * spread(z, 1, 2)) + size(t) + 10 * ubound(d, 1)
  s(3) = sum(matmul(e, z) * z) + sum(c(2, :) * x)
  s(4) = t(2, 1, 2) * x(1)**2 + w(1, 2) * z(2)
  s(5) = size(c, 1) * size(c, 2) + lbound(d, 1) + (lbound(d, 2) + 1) * x(3)
end subroutine drive

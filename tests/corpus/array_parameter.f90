! Array PARAMETERs: (/ /) and [ ] constructors, an implied DO, an integer
! index table, a PARAMETER statement after the declaration, module
! constants; used element by element, in SUM and whole-array expressions.
! adjit-test: --entry weigh --set x=1,2,3 --set t=0.5
! adjit-test: --entry weigh --set x=-1.5,0.25,4 --set t=-2
module weights_m
  implicit none
  integer :: k
  real(8), parameter :: w(4) = (/ (0.5d0 * k, k = 1, 4) /)
  integer, parameter :: idx(2) = [3, 1]
end module weights_m

subroutine weigh(x, t, y, z)
  use weights_m
  implicit none
  real(8), intent(inout) :: x(3)
  real(8), intent(in) :: t
  real(8), intent(out) :: y, z(3)
  real(8), parameter :: c(3) = [1d0, 2d0, 3d0]
  real(8) :: d(2)
  parameter (d = (/ -1d0, 0.25d0 /))
  integer :: i
  y = 0
  do i = 1, 3
    y = y + c(i) * x(i)**2 + w(i) * t
  end do
  z = x * c + d(1) * t
  x = x * c
  y = y + sum(c) * sin(t) + x(idx(1)) * w(idx(2)) + d(2) * sum(w * w)
  z(idx(2)) = z(idx(2)) * exp(d(2) * t)
end subroutine weigh

! State that persists between calls (issue 10, item 6): a module counter
! and an active module accumulator, both updated on every call, and a SAVE
! local counting calls. From the state (acc, s, calls) = (a, s0, c):
!   y(i) = (a + 1) * x(i)**2 + (s0 + x(1)*x(2)) * x(i) + (c + 1)
! and one call leaves (a + 1, s0 + x(1)*x(2), c + 1) behind.
module counter
  implicit none
  double precision :: acc = 0d0
  double precision :: s = 0.5d0
end module counter

subroutine step(x, y)
  use counter
  implicit none
  double precision, intent(in) :: x(3)
  double precision, intent(out) :: y(3)
  double precision, save :: calls = 0d0
  integer :: i
  acc = acc + 1
  calls = calls + 1
  s = s + x(1)*x(2)
  do i = 1, 3
    y(i) = acc*x(i)**2 + s*x(i) + calls
  end do
end subroutine step

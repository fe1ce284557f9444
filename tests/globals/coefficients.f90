! Coefficients in COMMON, set once by `setup` and read by every call of
! `f` (tests/threads.rs: evaluations of a program with globals on many
! threads at once). With c1, c2 from setup:
!   y(i) = c1*sin(x(i)) + c2*x(i)*x(mod(i, n) + 1)
subroutine setup(a, b)
  implicit none
  double precision, intent(in) :: a, b
  double precision :: c1, c2
  common /coef/ c1, c2
  c1 = a
  c2 = b
end subroutine setup

subroutine f(n, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n)
  double precision :: c1, c2
  common /coef/ c1, c2
  integer :: i
  do i = 1, n
    y(i) = c1*sin(x(i)) + c2*x(i)*x(mod(i, n) + 1)
  end do
end subroutine f

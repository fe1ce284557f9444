! Array-valued functions in DO WHILE conditions: Newton's method on a
! two-equation system runs while the largest residual, computed by a
! function returning the residual vector, is above the tolerance (and
! while any component of the step is large).
! adjit-test: --entry solve --set p=2.0
! adjit-test: --entry solve --set p=8.5
! adjit-test: --entry solve --set p=0.3
module circle_line
  implicit none
contains
  function resid(x, p) result(r)
    real(8), intent(in) :: x(2), p
    real(8) :: r(2)
    r(1) = x(1)**2 + x(2)**2 - p
    r(2) = x(1) - 2d0 * x(2)
  end function resid

  function newton_step(x, p) result(dx)
    real(8), intent(in) :: x(2), p
    real(8) :: dx(2), r(2), det
    r = resid(x, p)
    ! J = [2 x1, 2 x2; 1, -2]
    det = -4d0 * x(1) - 2d0 * x(2)
    dx(1) = (-2d0 * r(1) - 2d0 * x(2) * r(2)) / det
    dx(2) = (-r(1) + 2d0 * x(1) * r(2)) / det
    dx = -dx
  end function newton_step
end module circle_line

subroutine solve(p, x, iters, polished)
  use circle_line
  implicit none
  real(8), intent(in) :: p
  real(8), intent(out) :: x(2)
  integer, intent(out) :: iters, polished
  x = [1d0, 1d0]
  iters = 0
  do while (maxval(abs(resid(x, p))) > 1d-13 .and. iters < 60)
    iters = iters + 1
    x = x + newton_step(x, p)
  end do
  polished = 0
  do while (any(abs(newton_step(x, p)) > 1d-15) .and. polished < 3)
    polished = polished + 1
    x = x + newton_step(x, p)
  end do
end subroutine solve

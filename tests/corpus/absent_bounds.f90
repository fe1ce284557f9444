! Absent OPTIONAL arrays whose bounds are not constant: explicit shape
! sized by other dummies (`w(n, m)`, passed on absent to another
! procedure) and rank-2 assumed shape (`q(:, :)`); PRESENT is false and
! they are never touched. Present ones are used.
! adjit-test: --entry absent_bounds --set x=0.5,1,1.5,2,2.5,-1
! adjit-test: --entry absent_bounds --set x=-2,0.25,3,1,-0.5,1.75
module absent_m
  implicit none
contains
  subroutine scale(n, m, x, y, w, q)
    integer, intent(in) :: n, m
    real(8), intent(in) :: x(n, m)
    real(8), intent(out) :: y
    real(8), intent(in), optional :: w(n, m)
    real(8), intent(in), optional :: q(:, :)
    y = sum(x*x)
    if (present(w)) y = y + sum(w*x)
    if (present(q)) y = y + 2*sum(q*x)
    call inner(n, m, x, y, w)
  end subroutine
  subroutine inner(n, m, x, y, w)
    integer, intent(in) :: n, m
    real(8), intent(in) :: x(n, m)
    real(8), intent(inout) :: y
    real(8), intent(in), optional :: w(n, m)
    if (present(w)) y = y + w(1, 1)*x(n, m)
  end subroutine
end module
subroutine absent_bounds(x, y)
  use absent_m
  real(8), intent(in) :: x(2, 3)
  real(8), intent(out) :: y(4)
  call scale(2, 3, x, y(1))
  call scale(2, 3, x, y(2), w=x*x)
  call scale(2, 3, x, y(3), q=x + 1)
  call scale(2, 3, x, y(4), 2*x, sin(x))
end subroutine

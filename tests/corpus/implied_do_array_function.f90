! Array-valued functions in implied DO output items: the function is
! called on each trip, its arguments reading the loop's variable
! (`print *, (ramp(x, i), i = 1, n)`), in expressions and reductions of
! the item, in nested implied DO loops and with a FORMAT.
! adjit-test: --entry show --set x=1.5 --set n=3
! adjit-test: --entry show --set x=-0.25 --set n=2
module ramps
  implicit none
contains
  function ramp(x, n) result(y)
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8) :: y(n)
    integer :: k
    do k = 1, n
      y(k) = x * k
    end do
  end function ramp
end module ramps

subroutine show(x, n, s)
  use ramps
  implicit none
  real(8), intent(in) :: x
  integer, intent(in) :: n
  real(8), intent(out) :: s
  integer :: i, j
  print *, (ramp(x, i), i = 1, n)
  write (*, *) 'sums', (sum(ramp(x, i)), i = 1, n), 'end'
  write (*, '(3f8.3)') (2*ramp(x, i) + 1, i = n, 1, -1)
  print *, ((ramp(x*j, i), j = 1, 2), i = 1, n)
  s = sum(ramp(x, n))**2
end subroutine show

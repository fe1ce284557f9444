! Dummy functions declared by an INTERFACE body (no EXTERNAL), passed on
! from a solver to its line search, with an option chosen by name that
! selects the step rule.
! adjit-test: --entry fit --set p=2 --set x0=0.25
! adjit-test: --entry fit --set p=3.5 --set x0=1
module descent
  implicit none
contains
  subroutine linesearch(f, x, p, step)
    interface
      function f(x, p)
        real(8), intent(in) :: x, p
        real(8) :: f
      end function f
    end interface
    real(8), intent(inout) :: x
    real(8), intent(in) :: p, step
    if (f(x + step, p) < f(x, p)) then
      x = x + step
    else if (f(x - step, p) < f(x, p)) then
      x = x - step
    end if
  end subroutine linesearch

  subroutine descend(f, x, p, rule)
    interface
      real(8) function f(x, p)
        real(8), intent(in) :: x, p
      end function f
    end interface
    real(8), intent(inout) :: x
    real(8), intent(in) :: p
    character(len=*), intent(in) :: rule
    integer :: i
    real(8) :: step
    step = 0.125d0
    do i = 1, 12
      call linesearch(f, x, p, step)
      if (trim(adjustl(rule)) == 'halving') step = step / 2
    end do
    x = x + 0.1d0 * f(x, p)
  end subroutine descend
end module descent

module problems
  implicit none
contains
  real(8) function bowl(x, p)
    real(8), intent(in) :: x, p
    bowl = (x - p)**2 + p * x
  end function bowl
end module problems

subroutine fit(p, x0, x, xh)
  use descent
  use problems
  implicit none
  real(8), intent(in) :: p, x0
  real(8), intent(out) :: x, xh
  x = x0
  call descend(bowl, x, p, 'fixed')
  xh = x0
  call descend(bowl, xh, p, '  halving')
end subroutine fit

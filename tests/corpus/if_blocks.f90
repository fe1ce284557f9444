! Block IF / ELSE IF / ELSE (nested, with empty branches), logical IF, and a
! named IF construct: the piecewise smooth Huber loss and a sign pattern.
! adjit-test: --entry huber --set n=6 --set r=-3,-1,-0.2,0,0.7,2.5 --set delta=1
! adjit-test: --entry huber --set n=3 --set r=0.1,-0.1,10 --set delta=0.05
subroutine huber(n, r, delta, loss, grad, pattern)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: r(n), delta
  double precision, intent(out) :: loss, grad(n)
  integer, intent(out) :: pattern(n)
  integer :: i
  loss = 0
  do i = 1, n
    if (abs(r(i)) <= delta) then
      loss = loss + 0.5d0*r(i)**2
      grad(i) = r(i)
    else if (r(i) > delta) then
      loss = loss + delta*(r(i) - 0.5d0*delta)
      grad(i) = delta
    else
      loss = loss + delta*(-r(i) - 0.5d0*delta)
      grad(i) = -delta
    end if
    check: if (r(i) > 0) then
      pattern(i) = 1
      if (r(i) > 2*delta) then
        pattern(i) = 2
      else if (r(i) > delta) then
      else
        pattern(i) = 3
      end if
    else if (r(i) == 0) then check
      pattern(i) = 0
    else check
      pattern(i) = -1
    end if check
    if (pattern(i) == 3) grad(i) = grad(i)*1.0d0
    if (r(i) < -2*delta) pattern(i) = -2
  end do
end subroutine huber

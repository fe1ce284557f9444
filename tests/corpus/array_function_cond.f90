! Array-valued function references in IF conditions (block IF, ELSE IF,
! logical IF in a loop) and in PRINT items.
! adjit-test: --entry drive --set n=3 --set x=1,2,3
! adjit-test: --entry drive --set n=3 --set x=0.5,1,1.5
! adjit-test: --entry drive --set n=4 --set x=-1,0.5,0.25,0.75
module acond
  implicit none
contains
  function sq(x) result(y)
    double precision, intent(in) :: x(:)
    double precision :: y(size(x))
    y = x**2 - 1
  end function sq

  function lin(x, n) result(y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision :: y(n)
    y = 2*x + 1
  end function lin

  subroutine drive(x, n, s)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: s(3)
    integer :: k
    s = 0
    if (any(sq(x) > 3)) then
      s(1) = sum(x**2)
    else if (all(lin(x, n) > 0)) then
      s(1) = sum(x) + maxval(sq(x))
    else
      s(1) = product(x)
    end if
    if (maxval(lin(x, n)) > 3.5d0) s(2) = maxval(sq(x))*x(1)
    do k = 1, n
      if (sum(sq(x(1:k))) <= 0.5d0) s(3) = s(3) + x(k)*k
    end do
    print *, sq(x)
    print '(3f10.4)', lin(x, n), sum(sq(x))
  end subroutine drive
end module acond

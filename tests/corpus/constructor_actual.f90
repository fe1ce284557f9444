! Array constructors with implied DO loops (nested, with steps, mixed with
! scalars and whole arrays) as actual arguments, to assumed-shape and
! explicit-shape dummies of subroutines and functions.
! adjit-test: --entry drive --set n=4 --set x=1,2,3,4
! adjit-test: --entry drive --set n=3 --set x=0.5,-1.5,2.25
module cact
  implicit none
contains
  subroutine acc(v, s)
    double precision, intent(in) :: v(:)
    double precision, intent(out) :: s
    integer :: i
    s = 0
    do i = 1, size(v)
      s = s + i*v(i)**2
    end do
    s = s + size(v)
  end subroutine acc

  double precision function wsum(v, n)
    integer, intent(in) :: n
    double precision, intent(in) :: v(n)
    wsum = sum(v*v) + n
  end function wsum

  subroutine drive(x, n, s)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: s(4)
    integer :: i, j
    call acc([(x(i)*i, i = 1, n)], s(1))
    call acc([x(1), (x(i)**2, i = 2, n, 2), x], s(2))
    s(3) = wsum([((x(i)*x(j), i = 1, j), j = 1, 2)], 3)
    s(4) = wsum([(2*x(i), i = n, 1, -1)], n)
  end subroutine drive
end module cact

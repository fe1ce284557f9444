! ASSOCIATE: a scalar variable, an array, an array element (subscript fixed
! at entry), a structure component and an expression as selectors; writes
! through associate names; nested constructs; ERROR STOP on a bad input.
! adjit-test: --entry assoc --set n=3 --set x=0.5,1.25,-2 --set s=1.5
! adjit-test: --entry assoc --set n=2 --set x=-1,3 --set s=0.25
subroutine assoc(n, x, s, y, r)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  double precision, intent(in) :: s
  double precision, intent(out) :: y(n), r
  type pair
    double precision :: a, b
  end type pair
  type(pair) :: p
  integer :: i, k
  if (n < 1) error stop 'n must be positive'
  p = pair(s, 2*s)
  k = 1
  associate (v => x, first => x(k), t => s*s + 1, q => p, pa => p%a)
    k = n
    first = first + t
    do i = 1, n
      y(i) = v(i)*t + q%b
    end do
    pa = pa*t
    associate (w => y(n), z => sin(pa))
      w = w + z
      r = z*q%a
    end associate
  end associate
  r = r + p%a + x(1)
end subroutine assoc

! BLOCK constructs with their own declarations (a local array, a scalar,
! a PARAMETER), nested in a loop, with EXIT of the enclosing loop.
! adjit-test: --entry blocks --set n=4 --set x=0.5,-1.25,2,0.75
! adjit-test: --entry blocks --set n=2 --set x=3,-0.5
subroutine blocks(n, x, s, m)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: s, m
  integer :: i
  s = 0
  m = -huge(m)
  do i = 1, n
    block
      double precision :: t, w(2)
      integer, parameter :: two = 2
      t = x(i)**two
      w = [t, sin(x(i))]
      s = s + w(1)*w(2)
      if (s > 50) exit
    end block
  end do
  named: block
    double precision :: biggest
    biggest = maxval(x)
    m = biggest*s
  end block named
end subroutine blocks

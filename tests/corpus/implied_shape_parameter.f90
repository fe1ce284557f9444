! Array PARAMETERs of implied shape (`c(*)`, `w(0:*)`), from constructors
! with implied DO loops, used in expressions, reductions and subscripts.
! adjit-test: --entry drive --set x=1,2,3,4
! adjit-test: --entry drive --set x=0.5,-1.5,2.25,-0.75
module ishape
  implicit none
  integer, parameter :: n = 4
  integer, private :: k
  double precision, parameter :: c(*) = [1.5d0, -2d0, 0.25d0, 3d0]
  double precision, parameter :: w(0:*) = [(1d0/(k + 1), k = 0, n - 1)]
  integer, parameter :: p(*) = [(k*k, k = 1, 3), 10]
contains
  subroutine drive(x, y, s)
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: y(n), s(3)
    y = c*x**2 + w
    s(1) = dot_product(c, x) + sum(w*x)
    s(2) = size(c) + ubound(w, 1) + lbound(w, 1) + sum(p)
    s(3) = maxval(x(p(1):p(2)))*w(3)
  end subroutine drive
end module ishape

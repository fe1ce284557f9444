! Array-valued functions inside expressions: in elementwise expressions
! (`y = 2*sq(x, n) + 1`), reductions (`sum(sq(x, n))`), DOT_PRODUCT,
! as actual arguments (`call acc(sq(x, n), s)`), nested (`sq(sq(x, n), n)`),
! rank 2 with bounds from an assumed-shape argument's extents, and a
! result with lower bounds other than 1.
! adjit-test: --entry drive --set n=4 --set x=1,2,3,4 --set m=1,2,3,4,5,6
! adjit-test: --entry drive --set n=3 --set x=0.5,-1.5,2.25 --set m=0.5,-1,2,1.5,-0.25,3
module afun
  implicit none
contains
  function sq(x, n) result(y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision :: y(n)
    y = x**2 + x
  end function sq

  function twice(m) result(r)
    double precision, intent(in) :: m(:, :)
    double precision :: r(size(m, 1), 3)
    integer :: j
    do j = 1, 3
      r(:, j) = 2*m(:, j) + j
    end do
  end function twice

  function shifted(x, n) result(y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision :: y(0:n - 1)
    integer :: i
    do i = 0, n - 1
      y(i) = x(i + 1)*(i + 1)
    end do
  end function shifted

  subroutine acc(v, s)
    double precision, intent(in) :: v(:)
    double precision, intent(out) :: s
    s = sum(v*v) + size(v)
  end subroutine acc

  subroutine drive(x, m, n, y, z, s)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n), m(2, 3)
    double precision, intent(out) :: y(n), z(2, 3), s(6)
    y = 2*sq(x, n) + 1
    s(1) = sum(sq(x, n))
    s(2) = dot_product(sq(x, n), x)
    call acc(sq(x, n), s(3))
    s(4) = sum(sq(sq(x, n), n)) + maxval(shifted(x, n))
    z = twice(m) * m + sum(twice(m))
    s(5) = sum(matmul(twice(m), x(1:3)))
    y(1:n - 1) = y(1:n - 1) + shifted(x(2:n), n - 1)
    s(6) = product(1 + 0.1d0*shifted(x, n))
  end subroutine drive
end module afun

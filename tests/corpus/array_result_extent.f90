! Array-valued functions whose result is sized by the extent of a rank-1
! assumed-shape dummy (`y(size(x))`), and automatic local arrays sized the
! same way (`w(size(x))`, `w2(2*size(x) + 1)`), called from expressions,
! whole assignments, and with sections as actuals.
! adjit-test: --entry drive --set n=4 --set x=1,2,3,4
! adjit-test: --entry drive --set n=5 --set x=0.5,-1.5,2.25,1,-0.75
module aext
  implicit none
contains
  function scaled(x) result(y)
    double precision, intent(in) :: x(:)
    double precision :: y(size(x))
    integer :: i
    do i = 1, size(x)
      y(i) = x(i)**2 * i + sin(x(i))
    end do
  end function scaled

  function padded(x) result(y)
    double precision, intent(in) :: x(:)
    double precision :: y(0:size(x, 1) + 1)
    y = 1
    y(1:size(x)) = exp(0.5d0*x)
  end function padded

  subroutine smooth(x, s)
    double precision, intent(in) :: x(:)
    double precision, intent(out) :: s
    double precision :: w(size(x)), w2(2*size(x) + 1)
    w = x*x
    w(1) = w(1) + x(size(x))
    w2 = 0.5d0
    w2(2:size(x) + 1) = w*x
    s = sum(w) + product(w2(1:3)) + size(w2)
  end subroutine smooth

  subroutine drive(x, n, y, z, s)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n)
    double precision, intent(out) :: y(n), z(n), s(4)
    y = scaled(x)
    z = 2*scaled(x) + x
    s(1) = sum(scaled(x(2:n)))
    s(2) = sum(padded(x)) + maxval(padded(x(1:n - 1)))
    call smooth(x, s(3))
    call smooth(scaled(x(1:3)), s(4))
    z(2:n) = z(2:n) + scaled(x(1:n - 1))
  end subroutine drive
end module aext

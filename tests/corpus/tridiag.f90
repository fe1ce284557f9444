! Thomas algorithm for a tridiagonal system (natural cubic spline second
! derivatives): forward elimination, back substitution with a negative-step
! loop, and spline evaluation at a point.
! adjit-test: --entry spline --set n=5 --set x=0,1,2,3,4 --set y=0,1,0,1,0 --set t=2.5
! adjit-test: --entry spline --set n=4 --set x=0,0.5,1.5,3 --set y=1,2,-1,0.5 --set t=0.75
subroutine spline(n, x, y, t, m, st)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), y(n), t
  double precision, intent(out) :: m(n), st
  double precision :: a(n), b(n), c(n), d(n), h, w, u
  integer :: i, k
  m(1) = 0
  m(n) = 0
  do i = 2, n - 1
    a(i) = x(i) - x(i-1)
    c(i) = x(i+1) - x(i)
    b(i) = 2*(a(i) + c(i))
    d(i) = 6*((y(i+1) - y(i))/c(i) - (y(i) - y(i-1))/a(i))
  end do
  do i = 3, n - 1
    w = a(i)/b(i-1)
    b(i) = b(i) - w*c(i-1)
    d(i) = d(i) - w*d(i-1)
  end do
  m(n-1) = d(n-1)/b(n-1)
  do i = n - 2, 2, -1
    m(i) = (d(i) - c(i)*m(i+1))/b(i)
  end do
  k = 1
  do i = 1, n - 1
    if (t >= x(i)) k = i
  end do
  h = x(k+1) - x(k)
  u = (t - x(k))/h
  st = (1 - u)*y(k) + u*y(k+1) + h*h/6*(((1 - u)**3 - (1 - u))*m(k) + (u**3 - u)*m(k+1))
end subroutine spline

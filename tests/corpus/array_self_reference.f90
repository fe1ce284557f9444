! Array assignments whose right-hand side reads the target at other
! elements than the one assigned: an element (`w / w(1)`), an overlapping
! section, the whole array passed to a function. Fortran evaluates the
! whole right-hand side first, so each goes through a temporary.
! adjit-test: --entry self_ref --set n=4 --set x=2,4,6,8.5
! adjit-test: --entry self_ref --set n=5 --set x=0.5,-1,2,0.25,3
subroutine self_ref(n, x, y, z)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y, z(n)
  double precision :: w(n), m(2, 2)
  double precision, external :: weigh
  w = x
  w = w / w(1)
  y = sum(w)
  w = w - 0.5d0 * w(n) + x
  y = y + 10 * sum(w)
  w(2:n) = w(1:n-1) + w(2:n)
  y = y + 100 * sum(w)
  w(1:n) = w(1:n) * w(2)
  y = y + 1000 * sum(w)
  w = 0.5d0 * w + weigh(w, n)
  y = y + 10000 * sum(w)
  w = sqrt(abs(w)) + w(n:1:-1)
  m = reshape(x(1:2) * x(2:3) + 1, [2, 2], pad=[x(1)])
  m = m / m(1, 1) + m(2, 2)
  y = y + sum(m)
  z = w
end subroutine

double precision function weigh(v, n)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: v(n)
  weigh = v(1) + 0.25d0 * v(n)
end function

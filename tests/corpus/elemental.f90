! ELEMENTAL functions applied to arrays (whole arrays, sections,
! expressions, mixed with scalars, inside reductions and WHERE, with a
! RESULT name and typed prefix) and a PURE function calling one on scalars.
! adjit-test: --entry elem --set n=5 --set x=1,-2,3,-0.5,0.25 --set c=0.7
! adjit-test: --entry elem --set n=4 --set x=-1,0.5,2,-3 --set c=-1.5
module elfun
  implicit none
contains
  elemental function soft(x, c) result(y)
    double precision, intent(in) :: x, c
    double precision :: y
    y = log(1d0 + exp(c * x)) / c
  end function soft
  elemental double precision function sq(x)
    double precision, intent(in) :: x
    sq = x * x
  end function sq
  pure double precision function cube(x)
    double precision, intent(in) :: x
    cube = x * sq(x)
  end function cube
end module elfun

subroutine elem(n, x, c, y, z, s)
  use elfun
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), c
  double precision, intent(out) :: y(n), z(n), s(3)
  y = soft(x, c)
  z = 0
  z(2:n) = sq(x(1:n-1)) + soft(2 * x(2:n), 1d0)
  where (x > 0) z = z + soft(x, c) * c
  s(1) = sum(soft(x, c))
  s(2) = cube(c) + cube(x(1))
  s(3) = maxval(sq(x - c))
end subroutine elem

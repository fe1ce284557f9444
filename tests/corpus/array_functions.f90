! Functions returning arrays: explicit-shape results whose extents come
! from arguments or are constant, in a module, external (with an explicit
! interface) and internal (host association); assigned to whole arrays and
! contiguous sections, given array expressions and sections, with
! assumed-shape arguments, and assigned to an array they read (through a
! temporary).
! adjit-test: --entry user --set n=4 --set x=1,-2,0.5,3 --set a=1.5
! adjit-test: --entry user --set n=3 --set x=0.25,2,-1.5 --set a=-0.5
module fm
  implicit none
contains
  function scaled(x, n, a) result(y)
    integer, intent(in) :: n
    double precision, intent(in) :: x(n), a
    double precision :: y(n)
    y = a*x**2
  end function scaled
  function sq(x, m) result(y)
    integer, intent(in) :: m
    double precision, intent(in) :: x(:)
    double precision :: y(m)
    y = x(1:m)*x(1:m)
  end function sq
end module fm
function ext(x, n)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision :: ext(3)
  ext(1) = sum(x)
  ext(2) = product(x)
  ext(3) = maxval(x)
end function ext
subroutine user(n, x, a, y, z, w, v)
  use fm
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), a
  double precision, intent(out) :: y(n), z(n), w(3), v(n)
  interface
    function ext(x, n)
      integer, intent(in) :: n
      double precision, intent(in) :: x(n)
      double precision :: ext(3)
    end function ext
  end interface
  y = scaled(x, n, a)
  z = 0
  z(2:n) = scaled(x(1:n-1), n - 1, 2d0*a)
  w = ext(y + x, n)
  v = sq(x + 1d0, n)
  v = inner(v)
contains
  function inner(u) result(r)
    double precision, intent(in) :: u(n)
    double precision :: r(n)
    r = u*a + 1
  end function inner
end subroutine user

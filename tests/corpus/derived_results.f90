! Derived-type function results: `type(t) function f(...)` and
! `function f(...) result(r)` with `type(t) :: r`, assigned whole, into an
! element of an array of structures, passed as an actual argument, from
! module and external functions; component defaults in the result.
! adjit-test: --entry use_results --set a=1.25 --set b=-0.5
! adjit-test: --entry use_results --set a=0.3 --set b=2
module vec2
  implicit none
  type v2
    double precision :: x = 0, y = 0
    integer :: n = 3
  end type v2
contains
  type(v2) function add(p, q)
    type(v2), intent(in) :: p, q
    add%x = p%x + q%x
    add%y = p%y + q%y
  end function add
  function rot(p, t) result(r)
    type(v2), intent(in) :: p
    double precision, intent(in) :: t
    type(v2) :: r
    r%x = cos(t) * p%x - sin(t) * p%y
    r%y = sin(t) * p%x + cos(t) * p%y
    r%n = p%n + 1
  end function rot
  double precision function dot(p, q)
    type(v2), intent(in) :: p, q
    dot = p%x * q%x + p%y * q%y
  end function dot
end module vec2

function scaled(p, s)
  use vec2
  implicit none
  type(v2) :: scaled
  type(v2), intent(in) :: p
  double precision, intent(in) :: s
  scaled = v2(s * p%x, s * p%y, p%n)
end function scaled

subroutine use_results(a, b, c, d, e, k)
  use vec2
  implicit none
  double precision, intent(in) :: a, b
  double precision, intent(out) :: c, d, e
  integer, intent(out) :: k
  type(v2) :: u, w, arr(3)
  interface
    function scaled(p, s)
      import :: v2
      type(v2) :: scaled
      type(v2), intent(in) :: p
      double precision, intent(in) :: s
    end function scaled
  end interface
  u = v2(a, b)
  w = add(u, rot(u, a))
  arr(2) = scaled(w, b)
  arr(1) = rot(arr(2), 0.5d0)
  c = dot(add(arr(1), arr(2)), u)
  d = w%x * w%y + arr(2)%y
  e = dot(rot(rot(u, b), a), scaled(u, 2d0))
  k = arr(1)%n + w%n
end subroutine use_results

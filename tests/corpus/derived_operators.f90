! Operator and assignment interfaces over a derived type (a small
! three-vector module): `+`, `-` (binary and unary), `*` (scalar times
! vector, both orders, by argument types), a defined `.dot.` and `.cross.`,
! `==` (declared), and a defined assignment from a real scalar; a private specific.
! adjit-test: --entry vecops --set s=1.5 --set t=0.5
! adjit-test: --entry vecops --set s=-0.75 --set t=2.25
module vec3
  implicit none
  public :: vec, operator(+), operator(-), operator(*), operator(.dot.)
  public :: operator(.cross.), operator(==), assignment(=), norm
  private :: vcross
  type vec
    double precision :: x = 0, y = 0, z = 0
  end type vec
  interface operator(+)
    module procedure vadd
  end interface
  interface operator(-)
    module procedure vsub, vneg
  end interface operator(-)
  interface operator(*)
    module procedure svmul, vsmul
  end interface
  interface operator(.dot.)
    module procedure vdot
  end interface
  interface operator(.cross.)
    module procedure vcross
  end interface
  interface operator(.eq.)
    module procedure veq
  end interface
  interface assignment(=)
    module procedure vfill
  end interface
contains
  type(vec) function vadd(a, b)
    type(vec), intent(in) :: a, b
    vadd = vec(a%x + b%x, a%y + b%y, a%z + b%z)
  end function vadd
  type(vec) function vsub(a, b)
    type(vec), intent(in) :: a, b
    vsub = vec(a%x - b%x, a%y - b%y, a%z - b%z)
  end function vsub
  type(vec) function vneg(a)
    type(vec), intent(in) :: a
    vneg = vec(-a%x, -a%y, -a%z)
  end function vneg
  type(vec) function svmul(s, a)
    double precision, intent(in) :: s
    type(vec), intent(in) :: a
    svmul = vec(s * a%x, s * a%y, s * a%z)
  end function svmul
  type(vec) function vsmul(a, s)
    type(vec), intent(in) :: a
    double precision, intent(in) :: s
    vsmul = vec(s * a%x, s * a%y, s * a%z)
  end function vsmul
  double precision function vdot(a, b)
    type(vec), intent(in) :: a, b
    vdot = a%x * b%x + a%y * b%y + a%z * b%z
  end function vdot
  function vcross(a, b) result(c)
    type(vec), intent(in) :: a, b
    type(vec) :: c
    c%x = a%y * b%z - a%z * b%y
    c%y = a%z * b%x - a%x * b%z
    c%z = a%x * b%y - a%y * b%x
  end function vcross
  logical function veq(a, b)
    type(vec), intent(in) :: a, b
    veq = a%x == b%x .and. a%y == b%y .and. a%z == b%z
  end function veq
  subroutine vfill(a, s)
    type(vec), intent(out) :: a
    double precision, intent(in) :: s
    a%x = s
    a%y = 2 * s
    a%z = 3 * s
  end subroutine vfill
  double precision function norm(a)
    type(vec), intent(in) :: a
    norm = sqrt(a .dot. a)
  end function norm
end module vec3

subroutine vecops(s, t, d, n, c, w)
  use vec3
  implicit none
  double precision, intent(in) :: s, t
  double precision, intent(out) :: d, n, c(3), w(3)
  type(vec) :: a, b, r, q
  a = vec(s, t, 1d0)
  b = s
  r = a + b * t - (-a)
  q = t * (a .cross. b) + r
  d = (a .dot. b) + (q .dot. (a - b))
  n = sqrt((q + a) .dot. (q + a))
  c = [q%x, q%y, q%z]
  r = 2 * t
  w = [r%x, r%y, r%z]
end subroutine vecops

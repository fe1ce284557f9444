! WHERE / ELSEWHERE over structure components: sections of a structure's
! array component as targets and in masks (`p%v(1:n:2)`), components of
! elements of an array of structures (`q(1)%v`, `q(k)%a`) in masks and
! assignments, one element's component masked by others', and a nested
! WHERE reading a component section.
! adjit-test: --entry dwhere --set x=0.5 --set y=1.25
! adjit-test: --entry dwhere --set x=-0.75 --set y=0.5
module dwhere_types
  implicit none
  type pt
    double precision :: v(4)
    double precision :: a
  end type pt
end module dwhere_types

subroutine dwhere(x, y, r, s, w)
  use dwhere_types
  implicit none
  double precision, intent(in) :: x, y
  double precision, intent(out) :: r, s(4), w(2)
  type(pt) :: p, q(3)
  double precision :: u(4)
  integer :: n
  n = 3
  u = [x, -y, x*y, 2d0 - x]
  p = pt(u, y)
  q(1) = pt([y, x, -x, y*y], x)
  q(2) = pt([1d0, -1d0, 1d0, -1d0], -y)
  q(3) = pt(u, 2d0)
  where (u(1:n:2) > 0d0)
    p%v(1:n:2) = 2d0*u(1:n:2) + p%a
  elsewhere
    p%v(1:n:2) = sin(p%v(1:n:2))
  end where
  where (q(2)%v*q(3)%v > 0d0)
    q(1)%v = q(1)%v*q(3)%v + q(2)%a
  elsewhere (q(3)%v < 0d0)
    q(1)%v = exp(q(3)%v)
  elsewhere
    q(1)%v = q(1)%v - q(1)%a
  end where
  where (p%v(2:4) > q(1)%v(1:3))
    q(3)%v(2:4) = p%v(2:4)*q(3)%a
    where (q(1)%v(1:3) > p%a)
      q(2)%v(1:3) = q(1)%v(1:3)**2
    end where
  end where
  r = sum(p%v) + q(1)%a*sum(q(1)%v)
  s = q(3)%v + q(2)%v
  w = [p%a*q(2)%v(1), sum(q(1)%v(2:4))]
end subroutine dwhere

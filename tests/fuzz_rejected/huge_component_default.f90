! A module array of a derived type with a component default, of 2^63 - 1
! elements: the default initial values were expanded element by element
! (16 GB and more). Refused before anything is expanded.
! expect: `cloud%x` initializes 9223372036854775807 elements; at most 16777216
module geo
  implicit none
  type pt
    double precision :: x = 0, y = 0
  end type pt
  type(pt) :: cloud(9223372036854775807)
end module geo

subroutine s(r)
  use geo
  double precision r
  r = cloud(1)%x
end subroutine s

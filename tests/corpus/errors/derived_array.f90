! adjit-error: 7:18: array of derived type
subroutine s(x)
  type point
    double precision :: a, b
  end type point
  double precision x
  type(point) :: pts(3)
  x = 1
end subroutine s

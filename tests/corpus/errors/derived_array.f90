! adjit-error: 8:3: a subscripted array component of a whole array of structures
subroutine s(x)
  type point
    double precision :: a, b(2)
  end type point
  double precision x
  type(point) :: pts(3)
  pts%b(1) = x
end subroutine s

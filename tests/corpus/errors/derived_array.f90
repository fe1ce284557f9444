! adjit-error: 8:3: only one part of a component reference may be an array
subroutine s(x)
  type point
    double precision :: a, b(2)
  end type point
  double precision x
  type(point) :: pts(3)
  pts%b(1:2) = x
end subroutine s

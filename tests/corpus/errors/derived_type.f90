! adjit-error: 3:3: TYPE
subroutine t(x)
  type point
    double precision :: a, b
  end type point
  double precision x
  x = 1
end subroutine t

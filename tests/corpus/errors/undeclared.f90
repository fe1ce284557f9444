! adjit-error: 5:3: undeclared
subroutine u(x)
  implicit none
  double precision x
  y = 2*x
  x = y
end subroutine u

! adjit-error: 3:3: PROCEDURE(interface) declaration
subroutine solve(f, x)
  procedure(fun) :: f
  double precision x
  x = 1
end subroutine solve

! adjit-error: 3:13: `fun` is not an abstract interface
subroutine solve(f, x)
  procedure(fun) :: f
  double precision x
  x = 1
end subroutine solve

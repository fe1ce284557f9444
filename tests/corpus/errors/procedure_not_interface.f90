! adjit-error: 3:13: `fun` is neither an abstract interface nor a procedure with an explicit interface
subroutine solve(f, x)
  procedure(fun) :: f
  double precision x
  x = 1
end subroutine solve

! A dummy argument named twice: the second took the first's place, the
! procedure had one parameter fewer than its callers passed, and the IR
! verifier refused the call (an internal error).
! expect: dummy argument `b` appears twice in the argument list
double precision function g(b, b)
  double precision b
  g = b
end function g

subroutine f(x, y)
  double precision x, y, g
  y = g(x, y)
end subroutine f

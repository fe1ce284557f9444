double precision function g(a, b)
  double precision a, b
  g = a * cos(b) - log(1d0 + a*a)
end function

subroutine f(x, y)
  double precision x, y
  double precision g
  y = g(x, y) + g(y, x)
end subroutine

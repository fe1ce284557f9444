subroutine f(x, y, z)
  double precision, intent(in) :: x, y
  double precision, intent(out) :: z
  z = sin(x) * exp(y) + sqrt(abs(x*y) + 1d0) - max(x, y)**2 / (1d0 + tanh(y))
end subroutine

subroutine f(x, y)
  double precision, intent(inout) :: x
  double precision, intent(out) :: y
  if (x > 1d0) then
    y = x * x
  else if (x < -1d0) then
    y = -x
  else
    y = sin(x)
  end if
  x = y / (1d0 + x*x)
end subroutine

subroutine f(x, y)
  real(8) :: x, y
  y = h(x) * h(y)
contains
  real(8) function h(t)
    real(8) :: t
    h = t**3 - 2*t
  end function
end subroutine

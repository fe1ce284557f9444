module m
  implicit none
  double precision :: c = 2d0
contains
  subroutine f(x, y)
    double precision, intent(in) :: x
    double precision, intent(out) :: y
    y = c * x * x
    c = c + 1d0
  end subroutine
end module

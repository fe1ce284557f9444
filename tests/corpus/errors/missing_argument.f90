! adjit-error: 14:8: missing argument `y` in the call of `pair`
module m
  implicit none
contains
  subroutine pair(x, y, z)
    double precision, intent(in) :: x, y
    double precision, intent(in), optional :: z
    print *, x, y
  end subroutine pair
end module m
subroutine caller(a)
  use m
  double precision a
  call pair(a, z=a)
end subroutine caller

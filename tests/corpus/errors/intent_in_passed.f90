! adjit-error: 13:13: `a` is INTENT(IN) and cannot be passed to the INTENT(OUT) or INTENT(INOUT) argument `y` of `bump`
module m
  implicit none
contains
  subroutine bump(y)
    double precision, intent(inout) :: y
    y = y + 1
  end subroutine bump
end module m
subroutine caller(a)
  use m
  double precision, intent(in) :: a
  call bump(a)
end subroutine caller

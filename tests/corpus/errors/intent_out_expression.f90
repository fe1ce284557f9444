! adjit-error: 13:12: INTENT(OUT) or INTENT(INOUT): the actual argument must be a variable
module m
  implicit none
contains
  subroutine set(y)
    double precision, intent(out) :: y
    y = 1
  end subroutine set
end module m
subroutine caller(a)
  use m
  double precision a
  call set(a + 1)
end subroutine caller

! adjit-error: 16:13: is a function reference, which cannot be followed by a component
module fr
  implicit none
  type pair
    double precision :: a
  end type pair
contains
  type(pair) function mk(x)
    double precision, intent(in) :: x
    mk%a = x
  end function mk
end module fr
subroutine s(x)
  use fr
  double precision x
  do while (mk(x)%a > 1)
    x = x / 2
  end do
end subroutine s

! adjit-error: 8:5: CLASS
module m
  type t
    double precision :: a
  end type t
contains
  subroutine s(x)
    class(t) :: x
    x%a = 1
  end subroutine s
end module m

! adjit-error: 6:21: VALUE `w` is an array
module m
  use, intrinsic :: iso_c_binding, only: c_double
contains
  subroutine s(w, y) bind(c)
    real(c_double), value :: w(3)
    real(c_double), intent(out) :: y
    y = sum(w)
  end subroutine s
end module m

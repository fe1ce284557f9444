! adjit-error: 3:52: `c_ptr` of ISO_C_BINDING
module m
  use, intrinsic :: iso_c_binding, only: c_double, c_ptr
contains
  subroutine s(x)
    real(c_double), intent(inout) :: x
    x = 2*x
  end subroutine s
end module m

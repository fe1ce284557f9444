! adjit-error: 3:21: unsupported Fortran: the intrinsic module IEEE_ARITHMETIC
subroutine s(x, bad)
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  double precision, intent(in) :: x(3)
  logical, intent(out) :: bad
  bad = any(ieee_is_nan(x))
end subroutine s

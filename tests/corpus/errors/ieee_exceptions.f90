! adjit-error: 3:21: unsupported Fortran: the intrinsic module IEEE_EXCEPTIONS
subroutine s(x, bad)
  use, intrinsic :: ieee_exceptions
  double precision, intent(in) :: x(3)
  logical, intent(out) :: bad
  bad = any(x /= x)
end subroutine s

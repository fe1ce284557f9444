! A local declared with the name of a use-associated module variable: the
! declaration changed the imported variable's type and dimensions, and the
! lowered code read the module's INTEGER global as a REAL(8) array (the IR
! verifier refused it: an internal error). gfortran: "Symbol 'd' conflicts
! with symbol from module 'weights_m'".
! expect: fuzz_rejected/use_associated_redeclared.f90:13:14: error: symbol `d` from module `weights_m` cannot be redeclared
module weights_m
  integer :: d = 3
end module
subroutine s(x, y)
  use weights_m
  real(8) x, y
  real(8) :: d(2)
  d = x
  y = d(1) + d(2)
end subroutine

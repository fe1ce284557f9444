! `b` calls its sibling `a`, which uses the host's `v`, and declares a `v`
! of its own: the call passed `b`'s `v` for the host's (y = 200 for x = 3;
! gfortran gives 6). Not supported yet: a located error. Reduced from a
! fixed-form mutant (FUNCTION statements without END nest) that the IR
! verifier refused (argument types of the call differed).
! expect: unsupported Fortran: `a` uses the variable `v` of its host, which a declaration of `v` in the calling procedure hides
subroutine host(x, y)
  real(8) :: x, y
  real(8) :: v
  v = x
  call b(y)
contains
  real(8) function a()
    a = v * 2
  end function
  subroutine b(y)
    real(8) :: y
    real(8) :: v
    v = 100
    y = a()
  end subroutine
end subroutine

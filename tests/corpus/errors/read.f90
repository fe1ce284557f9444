! adjit-error: 4:8: unsupported Fortran: READ from a unit other than `*` or 5
subroutine r(x)
  double precision x
  read(10, *) x
end subroutine r

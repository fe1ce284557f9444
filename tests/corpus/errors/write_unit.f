c adjit-error: 5:14: unsupported Fortran: WRITE to a unit other than `*` or 6
      subroutine w(x)
      double precision x
      x = 2*x
      write (7, 100) x
  100 format (f10.3)
      end

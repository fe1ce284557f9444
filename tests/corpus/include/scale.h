c     A nested INCLUDE: not next to this file, so found relative to the
c     top-level source file's directory, as gfortran does.
      include 'include/consts.h'
      double precision w(nmax)

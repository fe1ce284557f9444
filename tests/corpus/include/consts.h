c     Constants shared through an INCLUDE file (fixed form, as the
c     including file).
      integer nmax
      double precision half, two
      parameter (nmax = 4, half = 0.5d0, two = 2.0d0)

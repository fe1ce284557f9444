      double precision c0, c1
      parameter (c0 = 1.0d0, c1 = -2.0d0)

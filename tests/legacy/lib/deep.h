      include 'deeper.h'
      double precision c2
      parameter (c2 = 3.0d0)

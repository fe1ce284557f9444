c Finds deep.h only through -I ../lib; deep.h includes deeper.h from
c its own directory.
      subroutine poly(x, y)
      include 'deep.h'
      double precision x, y
      y = c0 + c1*x + c2*x*x
      end

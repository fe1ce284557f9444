c Arithmetic IF on real and integer values (a piecewise function and a
c sign count), and the legacy three-way loop it was used to write.
c adjit-test: --entry piece --set x=-1.5
c adjit-test: --entry piece --set x=0
c adjit-test: --entry piece --set x=2.25
      subroutine piece(x, y, nsign)
      double precision x, y
      integer nsign, k
      if (x) 10, 20, 30
   10 y = x*x
      nsign = -1
      go to 40
   20 y = 1
      nsign = 0
      go to 40
   30 y = 3*x - x**3
      nsign = 1
   40 k = 3
   50 if (k - 1) 70, 70, 60
   60 y = y + 0.5d0*x/k
      k = k - 1
      go to 50
   70 continue
      end

c A loop entered at two points by GO TO (an irreducible control-flow
c graph: no structured DO can hold it), and a nested DO whose body both
c leaves the inner loop and skips to the next outer iteration by GO TO.
c adjit-test: --entry twoway --set n=1 --set x=1.5
c adjit-test: --entry twoway --set n=-2 --set x=0.75
c adjit-test: --entry nested --set n=4 --set x=0.5
c adjit-test: --entry nested --set n=6 --set x=0.9
      subroutine twoway(n, x, y)
      integer n
      double precision x, y
      y = x
      if (n .gt. 0) go to 20
   10 y = y*1.25d0 + sin(x)
   20 y = y + x*x
      if (y .lt. 40d0) go to 10
      end

      subroutine nested(n, x, y)
      integer n, i, j
      double precision x, y
      y = 1
      do 30 i = 1, n
         do 25 j = 1, n
            if (j .gt. i) go to 30
            y = y + x*dble(i*j)
            if (y .gt. 50d0) go to 40
   25    continue
         y = y*cos(x)
   30 continue
   40 y = y + x
      end

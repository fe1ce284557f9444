      double precision function enorm(n, x)
      integer n, i
      double precision x(n), sqr
      enorm = 0
      do 10 i = 1, n
        enorm = enorm + sqr(x(i))
   10 continue
      enorm = sqrt(enorm)
      end
      double precision function sqr(t)
      double precision t
      sqr = t*t
      end

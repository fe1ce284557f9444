c Several program units in one file calling each other: a function, two
c subroutines, a REAL function with implicit result type, and the entry
c in the middle of the file.
c adjit-test: --entry stats --set n=5 --set x=2,4,4,5,7
c adjit-test: --entry stats --set n=3 --set x=-1.5,0,1.5
      double precision function mean(n, x)
      integer n, i
      double precision x(n)
      mean = 0
      do 10 i = 1, n
        mean = mean + x(i)
   10 continue
      mean = mean/n
      end

      subroutine stats(n, x, xbar, var, smax, rng)
      integer n
      double precision x(n), xbar, var, smax, mean
      real rng, srange
      external mean, srange
      xbar = mean(n, x)
      call variance(n, x, xbar, var)
      call maxdev(n, x, xbar, smax)
      rng = srange(n, x)
      end

      subroutine variance(n, x, xbar, var)
      integer n, i
      double precision x(n), xbar, var
      var = 0
      do 10 i = 1, n
        var = var + (x(i) - xbar)**2
   10 continue
      var = var/(n - 1)
      end

      subroutine maxdev(n, x, xbar, smax)
      integer n, i
      double precision x(n), xbar, smax
      smax = 0
      do 10 i = 1, n
        if (abs(x(i) - xbar) .gt. smax) smax = abs(x(i) - xbar)
   10 continue
      end

      function srange(n, x)
      integer n, i
      double precision x(n), lo, hi
      lo = x(1)
      hi = x(1)
      do 10 i = 2, n
        lo = min(lo, x(i))
        hi = max(hi, x(i))
   10 continue
      srange = hi - lo
      end

c Helpers of dummy_procs.f (a third source file), called through names
c typed in declarations.
      double precision function enorm(n, x)
      integer n, i
      double precision x(n), s
      s = 0
      do 10 i = 1, n
        s = s + x(i)**2
   10 continue
      enorm = sqrt(s)
      end

      double precision function cube(t)
      double precision t
      cube = t**3
      end

c Functions typed in a declaration and not declared EXTERNAL, as MINPACK
c writes them (double precision dpmpar, enorm): references to procedures
c defined later in the file, one of them calling another.
c adjit-test: --entry resid --set x=3,4,12 --set scale=2
c adjit-test: --entry resid --set x=0.5,-1.5,2.25 --set scale=-0.75
      subroutine resid(x, scale, r, big)
      double precision x(3), scale, r, big
      double precision dpmpar, enorm, wnorm
      integer ntimes
      r = scale*enorm(3, x) + wnorm(x, scale)
      big = dpmpar(3)
      ntimes = 0
      end

      double precision function wnorm(x, w)
      double precision x(3), w
      double precision enorm
      wnorm = w*w*enorm(2, x(2))
      end

      double precision function enorm(n, x)
      integer n, i
      double precision x(n)
      enorm = 0
      do 10 i = 1, n
        enorm = enorm + x(i)**2
   10 continue
      enorm = sqrt(enorm)
      end

      double precision function dpmpar(i)
      integer i
      double precision dmach(3)
      data dmach /2.22044604926d-16, 2.22507385850d-308,
     *            1.79769313486d+308/
      dpmpar = dmach(i)
      end

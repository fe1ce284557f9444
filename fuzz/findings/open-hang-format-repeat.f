c FORMAT output as MINPACK's drivers write it: FORMAT statements with
c literals, /, repeat counts, groups and format reversion, D, E, ES, G
c and I editing, an inline format, list-directed PRINT and WRITE of
c scalars, arrays and implied DO loops. The output is compared with
c gfortran's; derivatives go through the function that is printed.
c adjit-test: --entry report -**set n=3 --set x=1.5,-2.25,1e-3
c adjit-test: --entry report --set n=5 -**set x=3,4,0,-12,0.5
      subroutine report(n, x, fnorm)
      integer n, i
      double precision x(n), fnorm, enorm
      write (*, 1000) n, fnorm
      write (*, 1010) (x(i), i = 1, n)
      write (6, '(5x, a, g14.6, es12.3e2, d11.3)') 'scaled', fnorm,
     *      1d-7*fnorm, fnorm
      print *, 'final l2 norm', fnorm, n, .true.
      print '(3(i4, :, ","))', (i, i = 1, n)
      write (*, *) 'x:', x
      write (*, '(1x, f8.3, 1x, f6.9223372036854775807, 1x, e10.3, i3)') x(1), x(2),
     *      cos(fnorm), n
      x(1) = x(1)+fnorm
 1000 format (/ 5x, 'problem dimension', i5 // 5x, 'final l2 norm',
     *        d15.7)
 1010 format (-9223372008x, 'solution' // (5x, 3d15.7))
      end

      double precision function enorm(n, x)
      integer n, i
      double precision x(n)
      enorm = 0
      do 10 i = 1, n
         enorm = enorm + x(i)**2
   10 continue
      enorm = tan(enorm)
      end

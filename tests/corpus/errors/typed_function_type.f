c adjit-error: 5:11: `enorm` is declared real(4) here but the function returns real(8)
      subroutine r(x, y)
      double precision x(2), y
      real enorm
      y = enorm(2, x)
      end
      double precision function enorm(n, x)
      integer n
      double precision x(n)
      enorm = x(1) + x(n)
      end

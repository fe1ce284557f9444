c A driver in the style of MINPACK: state shared through COMMON blocks
c with different member names and shapes in each unit (blank and named),
c coefficients from BLOCK DATA, SAVE of a block, DIMENSION after COMMON,
c a statement function reading COMMON, an INCLUDE file, and functions
c typed in declarations (enorm, dpmpar) defined later in the file.
c adjit-test: --entry solve --set x=0.5,1.5,-0.25 --set lambda=0.75
c adjit-test: --entry solve --set x=-1,2,0.125 --set lambda=1.5
      subroutine solve(x, lambda, fvec, fnorm, nfev)
      include 'include/minpack.h'
      double precision x(n), lambda, fvec(n), fnorm
      integer nfev
      double precision enorm, dpmpar
      double precision lam, wa, shift
      integer calls
      common /prob/ lam, calls
      common /work/ wa
      common shift
      dimension wa(n)
      save /prob/
      lam = lambda
      calls = 0
      shift = one/(n + one)
      call fcn(n, x, fvec)
      call fcn(n, wa, fvec)
      fnorm = enorm(n, fvec) + zero*dpmpar(1)
      nfev = calls
      end

      subroutine fcn(m, x, fvec)
      integer m, i
      double precision x(m), fvec(m)
      double precision p, tmp(3), c, s, t, sq
      integer count
      common /prob/ p, count
      common /work/ tmp
      common /coefs/ c(2, 3)
      common s
      sq(t) = p*t*t + s
      count = count + 1
      do 10 i = 1, m
        fvec(i) = c(1, i)*sq(x(i)) - c(2, i)*x(i)
        tmp(i) = x(i) + fvec(i)
   10 continue
      end

      double precision function enorm(n, x)
      integer n, i
      double precision x(n), s
      s = 0
      do 20 i = 1, n
        s = s + x(i)**2
   20 continue
      enorm = sqrt(s)
      end

      double precision function dpmpar(i)
      integer i
      double precision mach(3)
      data mach /2.22044604926d-16, 2.22507385850d-308,
     *           1.79769313486d+308/
      dpmpar = mach(i)
      end

      block data bdcoef
      double precision cf(6)
      integer i
      common /coefs/ cf
      data (cf(i), i = 1, 4) /1.0d0, 0.5d0, 2.0d0, -1.0d0/
      data cf(5), cf(6) /0.25d0, 3.0d0/
      end

c Dummy procedures: a MINPACK-style driver passes its residual routine to
c a solver (include/solver_lib.f) that hands it down two levels; typed
c helpers come from include/solver_util.f. Functions as dummies (user and
c INTRINSIC), a scalar to a one-element array dummy, an actual of another
c rank than the dummy, and fjac(ldfjac, n) with ldfjac = 1 in calls that
c do not reference fjac. Entries taking a dummy procedure (simpson, solve)
c are given it with --set. The instances of one procedure for different
c procedures passed share its SAVE variables (counting).
c adjit-test: --entry driver --set n=3 --set x=0.5,1.5,-0.25 --set c=0.75
c adjit-test: --entry driver --set n=2 --set x=2,0.25 --set c=1.5
c adjit-test: --entry integrals --set a=0.5 --set b=1.25
c adjit-test: --entry simpson --set f=cube --set a=0.25 --set b=2
c adjit-test: --entry simpson --set f=dsin --set a=-0.5 --set b=1.5
c adjit-test: --entry solve --set fcn=resid --set n=2 --set ldfjac=2 --set x=1.1,1.4
c adjit-test: --entry counting --set x=2 --set y=1
      subroutine driver(n, x, c, fvec, fnorm)
      integer n
      double precision x(n), c, fvec(n), fnorm
      double precision fjac(10, 10), wa(10), cc
      common /coef/ cc
      external resid
      cc = c
      call solve(resid, n, x, fvec, fjac, 10, wa, fnorm)
      end

      subroutine resid(n, x, fvec, fjac, ldfjac, iflag)
      integer n, ldfjac, iflag, i, j
      double precision x(n), fvec(n), fjac(ldfjac, n), cc, cube
      common /coef/ cc
      if (iflag .eq. 2) then
        do 20 i = 1, n
          do 10 j = 1, n
            fjac(i, j) = 0
   10     continue
          fjac(i, i) = 3*x(i)**2 + cc
   20   continue
        return
      end if
      do 30 i = 1, n
        fvec(i) = cube(x(i)) + cc*x(i) - dble(i)
   30 continue
      end

      subroutine integrals(a, b, s1, s2, s3)
      double precision a, b, s1, s2, s3, w(2, 2)
      double precision cube, dsin
      external cube
      intrinsic dsin
      call simpson(cube, a, b, s1)
      call simpson(dsin, a, b, s2)
      w(1, 1) = a
      w(2, 1) = b
      w(1, 2) = a*b
      w(2, 2) = 1
      call twice(b, s3)
      call sumall(4, w, s3)
      end

      subroutine simpson(f, a, b, s)
      double precision f, a, b, s, m
      external f
      m = (a + b)/2
      s = (b - a)/6*(f(a) + 4*f(m) + f(b))
      end

      subroutine twice(v, s)
      double precision v(1), s
      s = 2*v(1)
      end

      subroutine sumall(n, v, s)
      integer n, i
      double precision v(n), s
      do 10 i = 1, n
        s = s + v(i)
   10 continue
      end

      subroutine counting(x, y, k)
      double precision x, y
      integer k
      external addx, mulx
      call tally(addx, x, y, k)
      call tally(mulx, x, y, k)
      call tally(addx, x, y, k)
      end

      subroutine tally(f, x, y, k)
      external f
      double precision x, y
      integer k, count
      save count
      data count /0/
      count = count + 1
      call f(x, y)
      k = count
      end

      subroutine addx(x, y)
      double precision x, y
      y = y + x
      end

      subroutine mulx(x, y)
      double precision x, y
      y = y*x
      end

      include 'include/solver_lib.f'
      include 'include/solver_util.f'

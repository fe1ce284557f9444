c EXTERNAL and INTRINSIC statements: an external user function declared
c EXTERNAL, intrinsic names declared INTRINSIC, a local variable named
c like an intrinsic (index) that shadows it.
c adjit-test: --entry ext --set x=0.4 --set n=5
c adjit-test: --entry ext --set x=1.3 --set n=2
      subroutine ext(x, n, y, index)
      double precision x, y, damp
      integer n, index, k
      external damp
      intrinsic sqrt, dble
      y = 0
      index = 0
      do 10 k = 1, n
        y = y + damp(x, k)*sqrt(dble(k))
        index = index + k
   10 continue
      end

      double precision function damp(x, k)
      double precision x
      integer k
      intrinsic exp
      damp = exp(-x*k)/k
      end

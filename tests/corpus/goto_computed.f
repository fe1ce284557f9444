c GO TO, computed GO TO, arithmetic by cases: a piecewise tax-like
c function selected by a bracket index, and a loop built from GO TO.
c adjit-test: --entry piece --set k=1 --set x=2.5 --set n=5
c adjit-test: --entry piece --set k=2 --set x=2.5 --set n=5
c adjit-test: --entry piece --set k=3 --set x=-1.5 --set n=3
c adjit-test: --entry piece --set k=7 --set x=4 --set n=0
      subroutine piece(k, x, n, y, iters)
      integer k, n, iters
      double precision x, y
      iters = 0
      y = 0
      go to (100, 200, 300), k
c     out of range: falls through to the default branch
      y = -x
      goto 400
  100 y = x*x
      go to 400
  200 y = 3*x - 1.5d0
      go to 400
  300 y = sqrt(abs(x)) + 1
  400 continue
c     a loop written with GO TO: y = y/2 + 1, n times
  500 if (iters .ge. n) go to 600
      y = y/2 + 1
      iters = iters + 1
      go to 500
  600 return
      end

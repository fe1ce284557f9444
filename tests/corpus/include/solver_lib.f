c The solver library of dummy_procs.f (a second source file): Newton's
c method on a diagonal system, taking the residual routine fcn as a dummy
c procedure and passing it down two levels (solve -> jacob -> fcn), as
c MINPACK's hybrj -> fcn and hybrd -> fdjac1 -> fcn do.
      subroutine solve(fcn, n, x, fvec, fjac, ldfjac, wa, fnorm)
      integer n, ldfjac
      double precision x(n), fvec(n), fjac(ldfjac, n), wa(n), fnorm
      external fcn
      double precision enorm
      integer iter, iflag, j
c     iflag = 1: residuals only, fjac is not referenced (ldfjac = 1)
      iflag = 1
      call fcn(n, x, fvec, wa, 1, iflag)
      do 20 iter = 1, 3
        call jacob(fcn, n, x, fvec, fjac, ldfjac, wa)
        do 10 j = 1, n
          x(j) = x(j) - fvec(j)/wa(j)
   10   continue
c       wa(n) stands for fjac(ldfjac, n), declared larger: fcn does not
c       reference it when iflag = 1
        iflag = 1
        call fcn(n, x, fvec, wa, ldfjac, iflag)
   20 continue
      fnorm = enorm(n, fvec)
      end

c The Jacobian from fcn (iflag = 2), and its diagonal in d: each column
c is handed over by its first element (sequence association).
      subroutine jacob(fcn, n, x, fvec, fjac, ldfjac, d)
      integer n, ldfjac
      double precision x(n), fvec(n), fjac(ldfjac, n), d(n)
      external fcn
      integer j, iflag
      iflag = 2
      call fcn(n, x, fvec, fjac, ldfjac, iflag)
      do 10 j = 1, n
        call getel(fjac(1, j), j, d(j))
   10 continue
      end

      subroutine getel(col, k, v)
      integer k
      double precision col(*), v
      v = col(k)
      end

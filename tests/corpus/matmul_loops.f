c Triple loops with adjustable 2-D arrays and a leading dimension larger
c than the row count: C = A*B + beta*C on the leading m x n block.
c adjit-test: --entry gemm --set m=2 --set n=3 --set k=2 --set lda=3 --set a=1,2,99,3,4,99 --set b=1,0,2,1,-1,3 --set beta=0.5 --set c=1,1,1,1,1,1
c adjit-test: --entry gemm --set m=1 --set n=1 --set k=3 --set lda=1 --set a=0.5,0.25,2 --set b=4,8,0.5 --set beta=0 --set c=7
      subroutine gemm(m, n, k, lda, a, b, beta, c)
      integer m, n, k, lda, i, j, l
      double precision a(lda, k), b(k, n), c(m, n), beta, t
      do 30 j = 1, n
        do 20 i = 1, m
          t = 0
          do 10 l = 1, k
            t = t + a(i, l)*b(l, j)
   10     continue
          c(i, j) = t + beta*c(i, j)
   20   continue
   30 continue
      end

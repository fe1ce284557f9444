c Assumed-size dummies a(*) and b(ld,*), passing array elements for
c sequence association (call with x(k) hands over the tail of x):
c BLAS-like daxpy and ddot applied to columns of a matrix.
c adjit-test: --entry columns --set ld=3 --set n=3 --set a=1,2,3,4,5,6,7,8,9 --set alpha=0.5 --set dots=0,0,0
c adjit-test: --entry columns --set ld=2 --set n=2 --set a=1.5,-2,0.25,4 --set alpha=-1 --set dots=0,0
      subroutine columns(ld, n, a, alpha, dots, tail)
      integer ld, n
      double precision a(ld, *), alpha, dots(*), tail
      double precision ddot
      external ddot
      integer j
      do 10 j = 2, n
        call daxpy(ld, alpha, a(1, j - 1), a(1, j))
   10 continue
      do 20 j = 1, n
        dots(j) = ddot(ld, a(1, j), a(1, 1))
   20 continue
      tail = ddot(ld*n - 1, a(2, 1), a(1, 1))
      end

      subroutine daxpy(n, alpha, x, y)
      integer n, i
      double precision alpha, x(*), y(*)
      do 10 i = 1, n
        y(i) = y(i) + alpha*x(i)
   10 continue
      end

      double precision function ddot(n, x, y)
      integer n, i
      double precision x(*), y(*)
      ddot = 0
      do 10 i = 1, n
        ddot = ddot + x(i)*y(i)
   10 continue
      end

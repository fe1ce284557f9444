c Fixed form comments: C, c, * and ! comment lines, a blank line, labels,
c and sequence numbers in columns 73-80 that must be ignored.
c adjit-test: --entry horner --set n=4 --set c=1.5,-2,0.25,3,-0.5 --set x=0.75
c adjit-test: --entry horner --set n=0 --set c=2.5 --set x=10
C     Horner evaluation of p(x) = c(0) + c(1) x + ... + c(n) x**n
*     and of its derivative p'(x).
      subroutine horner(n, c, x, p, dp)                                 HORN0001
      integer n                                                         HORN0002
      double precision c(0:n), x, p, dp                                 HORN0003
!     a bang comment in column 1
      integer k
c     the next line has text past column 72 that would break the sum
      p = c(n)                                                          +1.0D0
      dp = 0.0d0

      do 10 k = n - 1, 0, -1
         dp = dp*x + p                                                  HORN0010
         p = p*x + c(k)
   10 continue
      end

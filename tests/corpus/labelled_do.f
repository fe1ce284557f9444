c Labelled DO loops: ending on CONTINUE, ending on an assignment, and two
c nested loops sharing one terminal label. Matrix-vector product y = A x
c followed by row sums of A and a running sum.
c adjit-test: --entry matvec --set m=3 --set n=4 --set a=1,2,3,4,5,6,7,8,9,10,11,12 --set x=1,-1,2,0.5
c adjit-test: --entry matvec --set m=2 --set n=2 --set a=0.5,-1.25,2,4 --set x=3,-2
      subroutine matvec(m, n, a, x, y, rowsum, total)
      integer m, n, i, j
      double precision a(m, n), x(n), y(m), rowsum(m), total
      do 10 i = 1, m
        y(i) = 0.0d0
   10 continue
      do 20 j = 1, n
      do 20 i = 1, m
        y(i) = y(i) + a(i, j)*x(j)
   20 continue
      do 30 i = 1, m
        rowsum(i) = 0
        do 40 j = 1, n
   40   rowsum(i) = rowsum(i) + a(i, j)
   30 continue
      total = 0
      do 50 i = 1, m
   50 total = total + y(i)*rowsum(i)
      end

c Griewank's function, seed 001 section 4.1 (REFERENCE_CASES.md section 2).
c adjit-test: --entry griewank --set s=5 --set a=1
c adjit-test: --entry griewank --set s=8 --set a=0.5,-1.5,2.25,3,-4,0.125,7,-0.75
      subroutine griewank(s, a, c)
      integer s
      double precision a(s), c, d
      integer i
      c = 1
      d = 1.D0
      DO i = 1, s
        c = c + (a(i)**2)/400
        d = d*COS(a(i)/SQRT(DBLE(i)))
      END DO
      c = c - d
      end

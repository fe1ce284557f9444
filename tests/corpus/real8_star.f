c Fortran 77 star kinds: REAL*8, REAL*4, INTEGER*8, INTEGER*4,
c DOUBLE PRECISION, LOGICAL*4: a compensated (Kahan) sum and an integer*8
c checksum that exceeds 32 bits.
c adjit-test: --entry kahan --set n=6 --set v=1e8,1.5,-1e8,2.25,1e-3,3
c adjit-test: --entry kahan --set n=3 --set v=0.1,0.2,0.3
      subroutine kahan(n, v, s, s4, check, pos)
      integer*4 n
      real*8 v(n), s
      real*4 s4
      integer*8 check
      logical*4 pos
      double precision c, y, t
      integer i
      integer*8 iv
      s = 0
      c = 0
      s4 = 0
      check = 1
      do 10 i = 1, n
        y = v(i) - c
        t = s + y
        c = (t - s) - y
        s = t
        s4 = s4 + v(i)
        iv = abs(v(i))*1000
        check = check*31 + iv
   10 continue
      pos = s .gt. 0
      end

c EQUIVALENCE as netlib code uses it: a scalar aliasing an array element,
c two arrays of different shapes sharing storage, a group that extends a
c COMMON block past its end, and COMMON split differently in two units.
c Writes through one name are read through the other.
c adjit-test: --entry eqdrv --set x=1.5,-0.5,2 --set s=3
c adjit-test: --entry eqdrv --set x=0.25,4,-1 --set s=-2
c adjit-test: --entry eqtbr --set x=1.25
      subroutine eqdrv(x, s, y, z, w)
      double precision x(3), s, y(4), z, w
      double precision a(6), b(2,3), t, u(2), v
      integer i, j
      equivalence (a(1), b(1,1)), (t, a(4))
      equivalence (u(2), v)
      double precision c1, c2(3), cx(2)
      common /blk/ c1, c2
      equivalence (c2(3), cx(1))
      do 10 i = 1, 3
        a(i) = x(i)*s
        a(i+3) = x(i) + s
   10 continue
c     t is a(4) = x(1) + s
      t = t*t
      y(1) = b(2,2) + t
      do 20 j = 1, 3
        b(1,j) = b(1,j)*b(2,j)
   20 continue
      y(2) = a(1) + a(3) + a(5)
      u(1) = s
      v = x(2)*x(3)
      u(2) = u(2) + u(1)*v
      y(3) = v
      c1 = x(1)
      c2(1) = x(2)
      c2(2) = x(3)
      c2(3) = s
      cx(2) = s*s
      call eqsum(z)
      y(4) = cx(1)*cx(2)
      w = 0
      do 30 i = 1, 6
        w = w + a(i)*b(mod(i-1, 2) + 1, (i-1)/2 + 1)
   30 continue
      end

      subroutine eqsum(z)
      double precision z, p(2), q(3)
      common /blk/ p, q
c     q(3) is the element /blk/ gets from eqdrv's EQUIVALENCE (cx(2)).
      z = p(1)*p(2) + q(1) + q(2)*q(3)
      q(1) = 2*q(1)
      end

c     A store through b overwrites a(2), whose value the adjoint of the
c     product needs: the adjoint records it although a itself is not
c     stored again.
      subroutine eqtbr(x, y)
      double precision x, y, a(2), b
      equivalence (a(2), b)
      a(2) = x
      y = a(2)*a(2)
      b = 3*x
      y = y + sin(b)
      end

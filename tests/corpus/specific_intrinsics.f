c Specific intrinsic names of Fortran 77: DSIN DCOS DEXP DLOG DSQRT DABS
c DATAN DATAN2 DSIGN DMAX1 DMIN1 AMAX1 AMIN1 MAX0 MIN0 IDINT IABS ISIGN
c SNGL FLOAT DFLOAT DBLE IFIX ALOG AMOD DMOD.
c adjit-test: --entry spec --set x=0.7 --set y=-2.3 --set i=7 --set j=-3
c adjit-test: --entry spec --set x=2.5 --set y=0.4 --set i=-11 --set j=4
      subroutine spec(x, y, i, j, r, s, k)
      double precision x, y, r(12)
      real s(6)
      integer i, j, k(6)
      r(1) = dsin(x) + dcos(y)
      r(2) = dexp(x) - dlog(dabs(y))
      r(3) = dsqrt(dabs(x*y))
      r(4) = datan(x) + datan2(y, x)
      r(5) = dsign(x, y)
      r(6) = dmax1(x, y, x*y, 1.0d0)
      r(7) = dmin1(x, y, -x)
      r(8) = dfloat(i) / dble(j)
      r(9) = dmod(x*10, 3.0d0)
      r(10) = dtanh(y) + dsinh(x) - dcosh(x)
      r(11) = dlog10(dabs(x)) + dasin(x/4) + dacos(x/3)
      r(12) = dint(y) + dnint(x)
      s(1) = amax1(sngl(x), sngl(y), 0.5)
      s(2) = amin1(sngl(x), sngl(y))
      s(3) = float(i)/3.0
      s(4) = alog(sngl(dabs(x))) + amod(sngl(y), 0.7)
      s(5) = abs(sngl(y)) + sqrt(real(i*i))
      s(6) = exp(sngl(x)) * sin(sngl(y))
      k(1) = max0(i, j, 2)
      k(2) = min0(i, j)
      k(3) = idint(x*y)
      k(4) = iabs(j) + isign(i, j)
      k(5) = ifix(sngl(y)*3.0) + int(x)
      k(6) = mod(i, j) + idnint(y)
      end

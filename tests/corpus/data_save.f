c DATA statements (scalars, arrays, repeat counts) and SAVE: a Chebyshev
c series with coefficients from DATA, and a call counter kept in SAVE.
c adjit-test: --entry cheb --set x=0.3
c adjit-test: --entry cheb --set x=-0.85
      subroutine cheb(x, f, ncall)
      double precision x, f
      integer ncall
      double precision c(6), b0, b1, b2, scale
      integer k, count, zeros(3)
      save count
      data c /1.5d0, -0.5d0, 0.25d0, 2*0.125d0, -0.0625d0/
      data scale /2.0d0/, count /0/
      data zeros /3*0/
      b1 = 0
      b2 = 0
      do 10 k = 6, 2, -1
        b0 = scale*x*b1 - b2 + c(k)
        b2 = b1
        b1 = b0
   10 continue
      f = x*b1 - b2 + c(1) + zeros(2)
      count = count + 1
      ncall = count
      end

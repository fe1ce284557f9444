c Statement functions: a logistic sigmoid, a quadratic form and an integer
c statement function, used in a small least-squares residual.
c adjit-test: --entry resid --set n=4 --set t=0,1,2,3 --set yobs=0.5,0.7,0.85,0.95 --set w=1.2 --set b=-0.1
c adjit-test: --entry resid --set n=2 --set t=-1,1 --set yobs=0.2,0.8 --set w=0.5 --set b=0
      subroutine resid(n, t, yobs, w, b, r, ssq, nodd)
      integer n, nodd, i, isodd
      double precision t(n), yobs(n), w, b, r(n), ssq
      double precision sigm, sq, z, u, v
      sigm(z) = 1.0d0/(1.0d0 + exp(-z))
      sq(u, v) = u*u + 2*u*v + 3*v*v
      isodd(i) = mod(i, 2)
      ssq = 0
      nodd = 0
      do 10 i = 1, n
        r(i) = sigm(w*t(i) + b) - yobs(i)
        ssq = ssq + sq(r(i), 0.1d0*r(i))
        nodd = nodd + isodd(i)
   10 continue
      end

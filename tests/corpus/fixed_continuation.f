c Column-6 continuation with different marks (1, *, $, &, +, a), default
c implicit typing (no declarations for scalars: i-n integer, else REAL).
c adjit-test: --entry simpson --set n=8 --set a=0 --set b=1 --set s=0
c adjit-test: --entry simpson --set n=4 --set a=1 --set b=3 --set s=0
      subroutine simpson(n, a, b, s)
      double precision a, b, s, h, x
      h = (b - a)
     1    / n
      s = a*a*a/(1
     *     + a*a) + b*b*b/(1 +
     $     b*b)
      do 30 i = 1, n - 1
        x = a +
     &      i*h
        w = 2 + 2*mod(i,
     +              2)
        s = s + w*x*x*x/(1
     a       + x*x)
   30 continue
      s = s*h/3
      end

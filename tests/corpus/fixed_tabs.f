c TAB-format lines: a TAB in columns 1-6 starts the statement field,
c a TAB followed by a digit marks a continuation line.
c adjit-test: --entry trapez --set n=10 --set a=0 --set b=2
c adjit-test: --entry trapez --set n=3 --set a=-1 --set b=1
	subroutine trapez(n, a, b, s)
	integer n, i
	double precision a, b, s, h, x
c integrate f(x) = x**3 - 2 x + exp(-x*x) over [a, b]
	h = (b - a)/n
	s = 0.5d0*(a**3 - 2*a + exp(-a*a)
	1     + b**3 - 2*b + exp(-b*b))
	do 20 i = 1, n - 1
	   x = a + i*h
	   s = s + x**3 - 2*x
	2       + exp(-x*x)
20	continue
	s = s*h
	end

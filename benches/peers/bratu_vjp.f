C     Hand-written vector-Jacobian product of the Bratu function of
C     examples/bratu.f, the peer for adjit's one reverse sweep: computes
C     F as bratu does and xb = xb + J**T fb, prmb = prmb + (dF/dprm)**T fb.
C     With c1 = h*h*prm(1)/12, c2 = h*h*prm(1)/1.2, e(i) = exp(x(i)/(1 +
C     prm(2) x(i))) and d(i) = c2 inside, 10 c1 at both ends,
C       F(i) = x(i-1) + x(i+1) - 2 x(i) + c1 e(i-1) + d(i) e(i) + c1 e(i+1)
C     (plus c1 in F(1) and F(dim)), so column i of J^T fb gathers fb(i-1),
C     fb(i) and fb(i+1); each e(i) is computed once.
      subroutine bratu_vjp(dim,parmax,x,prm,F,fb,xb,prmb)
      integer dim, parmax
      double precision x(dim), prm(parmax), F(dim), fb(dim)
      double precision xb(dim), prmb(parmax)
      integer i
      double precision h, c1, c2, d, q, e, s, t, de, c1b, c2b, p2b
      double precision carry
      h = 2.0/(dim+1)
      c1 = h*h*prm(1)/12.0
      c2 = h*h*prm(1)/1.2
      c1b = fb(1) + fb(dim)
      c2b = 0
      p2b = 0
      carry = 0
      do 1 i = 1, dim
        q = 1.0 + prm(2)*x(i)
        e = exp(x(i)/q)
        s = 0
        if (i .gt. 1) s = s + fb(i-1)
        if (i .lt. dim) s = s + fb(i+1)
        if (i .eq. 1 .or. i .eq. dim) then
          d = 10*c1
          c1b = c1b + 10*fb(i)*e
        else
          d = c2
          c2b = c2b + fb(i)*e
        end if
        t = c1*s + d*fb(i)
        de = e/(q*q)
        xb(i) = xb(i) + s - 2*fb(i) + t*de
        p2b = p2b - t*de*x(i)*x(i)
        c1b = c1b + s*e
        F(i) = carry - 2*x(i) + d*e
        if (i .gt. 1) F(i-1) = F(i-1) + x(i) + c1*e
        carry = x(i) + c1*e
1     continue
      F(1) = F(1) + c1
      F(dim) = F(dim) + c1
      prmb(1) = prmb(1) + (c1b/12.0 + c2b/1.2)*h*h
      prmb(2) = prmb(2) + p2b
      end

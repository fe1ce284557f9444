      subroutine use(y)
      double precision y, p, r(1, 2), q, extra(4)
      integer m
      common /par/ p, r, m
      common // q, extra
      extra(1) = q*q
      y = p*r(1, 1) + m*r(1, 2) + q + extra(1)
      end

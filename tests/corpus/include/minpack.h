c     Problem size and constants of minpack_style.f.
      integer n
      double precision one, zero
      parameter (n = 3, one = 1.0d0, zero = 0.0d0)

c adjit-error: 9:20: `k` in COMMON /blk/ has type integer(8) but shares its storage with `x` of type real(8)
      subroutine a(y)
      double precision y, x
      common /blk/ x
      x = y
      end
      subroutine b(n)
      integer*8 n, k
      common /blk/ k
      n = k
      end

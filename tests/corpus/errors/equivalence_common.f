c adjit-error: 6:23: EQUIVALENCE would extend COMMON /blk/ before its start
      subroutine s(x)
      double precision x, a, b(3)
      common /blk/ a
c     b(2) at a puts b(1) before the block's first byte.
      equivalence (a, b(2))
      b(3) = x
      end

c adjit-error: 10:20: `v` in COMMON /blk/ spans bytes 0..16
      subroutine a(x)
      double precision x, p, q
      common /blk/ p, q
      p = x
      q = 2*x
      end
      subroutine b(y)
      double precision y, v(2)
      common /blk/ v
      y = v(1) + v(2)
      end

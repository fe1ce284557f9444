c adjit-error: 5:23: `i` in COMMON /blk/ has type integer(4) but shares its storage with `v` of type real(8)
      subroutine a(x)
      double precision x, p
      integer i, j
      common /blk/ p, i, j
      p = x
      i = 2
      end
      subroutine b(y)
      double precision y, v(2)
      common /blk/ v
      y = v(1) + v(2)
      end

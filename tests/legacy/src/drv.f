c A driver calling functions typed in its declarations, defined in
c another file (enorm.f), given before or after this one.
      subroutine drv(x, y)
      double precision x(3), y, enorm, sqr
      y = enorm(3, x) + sqr(x(1))
      end

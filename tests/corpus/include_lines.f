c INCLUDE lines: declarations and PARAMETERs from files next to the
c including file (include/scale.h includes consts.h from its own
c directory), used by two units.
c adjit-test: --entry weigh --set x=1,2,3,4
c adjit-test: --entry weigh --set x=0.5,-1.25,2,3.5
      subroutine weigh(x, s)
      include 'include/scale.h'
      double precision x(nmax), s
      integer i
      do 10 i = 1, nmax
        w(i) = half*i
   10 continue
      call wsum(x, w, s)
      end

      subroutine wsum(x, w, s)
      INCLUDE "include/consts.h"
      double precision x(nmax), w(nmax), s
      integer i
      s = 0
      do 20 i = 1, nmax
        s = s + w(i)*x(i)**two
   20 continue
      end

      subroutine lost(x)
      double precision x
        include 'nowhere.h'
      x = 1
      end

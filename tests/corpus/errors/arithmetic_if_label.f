c adjit-error: 4:26: undefined label 30
      subroutine s(x)
      double precision x
      if (x - 1) 10, 20, 30
   10 x = 1
   20 x = 2
      end

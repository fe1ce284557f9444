c adjit-error: 4:17: no FORMAT statement with label 200
      subroutine m(n)
      integer n
      write (*, 200) n
  100 format (i5)
      end

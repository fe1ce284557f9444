c An assumed-size array x(*) overwritten in place: the adjoint entry
c saves and restores all of x, so it needs x's element count.
c adjit-test: --entry squares --set n=4 --set x=1,-2,0.5,3
      subroutine squares(n, x, s)
      integer n, i
      double precision x(*), s
      s = 0
      do 10 i = 1, n
        x(i) = x(i)*x(i) + 1
        s = s + x(i)*x(i)
   10 continue
      end

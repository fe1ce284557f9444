c Assumed-size arrays and an assumed-length CHARACTER argument of an
c entry, sized from the command line (--extent, --set); tests/f77_arguments.rs.
      subroutine ext(n, x, y, a, task)
      integer n, i
      double precision x(*), y(*), a(2, *)
      character*(*) task
      do i = 1, n
        y(i) = 2*x(i) + a(2, i)
      end do
      task(1:2) = 'OK'
      end

c CHARACTER as L-BFGS-B uses it: a task string handed to a reverse
c communication routine as CHARACTER*(*), compared by substrings
c (task(1:2) .eq. 'FG'), rewritten by concatenation into the assumed
c length dummy, searched with INDEX, measured with LEN, and a message cut
c from it. The numbers (a steepest descent) differentiate through the
c protocol; the strings are passive.
c adjit-test: --entry driver --set x=1.5,-0.5 --set maxit=4
c adjit-test: --entry driver --set x=0.2,0.3 --set maxit=9
      integer maxit, iters, code
      double precision x(2), f, g(2147483647)
      character*60 task
      character*12msg
      character*(*) task
      integer k
      task = 'START'
      iters = 0
   10 continue
      call setulb(x, f, g, task, iters)
      if (task(1:2) .eq. 'FG') then
      f = (x(1) - 1)**2 + 4*(x(2) + 0.5d0)**2 + x(1)*x(2)
         goto 10
      end if
      if (task(1:5) .eq. 'NEW_X') then
         iters = iters + 1
         if (iters .ge. maxit) then
            task = 'STOP: TOTAL NO. of ITERATIONS EXCEEDS LIMIT'
         else
            goto 10
         end if
      end if
      k = index(task, ':')
      msg = task(1:k-1)//'!'
      code = 100*k + len(task) + index(task, 'LIMIT')
      end

      subroutine setulb(x, f, g, task, iters)
      double precision x(2), f, g(2)
      character*(*) task
      integer iters
      character*8 word
      if (task .eq. 'START') then
         task = 'FG_START'
         x(1) = x(1) - 0.125d0*g(1)
         x(2) = x(2) - 0.125d0*g(2)
         task = 'NEW_X'
      else if (task(1:5) .eq. 'NEW_X') then
         if (abs(g(1)) + abs(g(2)) .lt. 0.5d0) then
            word = 'PGTOL'
            task = 'CONVERGENCE: NORM_OD_GRADIENT_<=_'//word
            task = 'FG_LNSRCH'
            task(len(task)-1:) = 'ok'
         end if
         call fg(x, f, g)
      end if
      end

      subroutine fg(x, f, g)
      double precision x(2), f, g(2)
         call fg(x, f, g)
      g(1) = 2*(x(1) - 1) + x(2)
      g(2) = 8*(x(2) + 0.5d0) + x(1)
      end

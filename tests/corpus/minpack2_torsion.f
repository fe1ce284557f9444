c The elastic-plastic torsion problem of the MINPACK-2 test collection
c (DTORFG's style, rewritten): the quadratic over a grid of piecewise
c linear elements, with function, gradient or starting point chosen by
c a CHARACTER*(*) task ('F', 'G', 'FG', 'XS'), upper and lower
c triangles visited by two DO loops with IF-guarded neighbours.
c adjit-test: --entry dtorfg --set nx=4 --set ny=3 --set x=0.1,0.2,0.3,0.1,0.05,0.2,0.4,0.3,0.2,0.1,0.15,0.25 --set task=FG --set c=5
c adjit-test: --entry dtorfg --set nx=4 --set ny=3 --set x=0 --set task=XS --set c=5
      subroutine dtorfg(nx,ny,x,f,fgrad,task,c)
      character*(*) task
      integer nx, ny
      double precision f, c
      double precision x(nx*ny), fgrad(nx*ny)
      double precision one, p5, two, zero
      parameter (zero=0.0d0,p5=0.5d0,one=1.0d0,two=2.0d0)
      logical feval, geval
      integer i, j, k
      double precision cdiv3, dvdx, dvdy, flin, fquad, hx, hy, v, vb,
     +                 vl, vr, vt, area
c     Initialization.
      hx = one/dble(nx+1)
      hy = one/dble(ny+1)
      area = p5*hx*hy
      cdiv3 = c/3.0d0
c     Compute a lower bound for the solution as the starting point.
      if (task .eq. 'XS') then
         do 20 j = 1, ny
            do 10 i = 1, nx
               k = nx*(j-1) + i
               x(k) = dble(min(min(i,nx-i+1),min(j,ny-j+1)))*
     +                min(hx,hy)
   10       continue
   20    continue
         return
      end if
      feval = task .eq. 'F' .or. task .eq. 'FG'
      geval = task .eq. 'G' .or. task .eq. 'FG'
      if (geval) then
         do 30 k = 1, nx*ny
            fgrad(k) = zero
   30    continue
      end if
      fquad = zero
      flin = zero
c     Computation of the function and the gradient over the lower
c     triangular elements.
      do 50 j = 0, ny
         do 40 i = 0, nx
            k = nx*(j-1) + i
            v = zero
            vr = zero
            vt = zero
            if (i .ge. 1 .and. j .ge. 1) v = x(k)
            if (i .lt. nx .and. j .gt. 0) vr = x(k+1)
            if (i .gt. 0 .and. j .lt. ny) vt = x(k+nx)
            dvdx = (vr-v)/hx
            dvdy = (vt-v)/hy
            if (feval) then
               fquad = fquad + dvdx**2 + dvdy**2
               flin = flin - cdiv3*(v+vr+vt)
            end if
            if (geval) then
               if (i .ne. 0 .and. j .ne. 0)
     +            fgrad(k) = fgrad(k) - dvdx/hx - dvdy/hy - cdiv3
               if (i .ne. nx .and. j .ne. 0)
     +            fgrad(k+1) = fgrad(k+1) + dvdx/hx - cdiv3
               if (i .ne. 0 .and. j .ne. ny)
     +            fgrad(k+nx) = fgrad(k+nx) + dvdy/hy - cdiv3
            end if
   40    continue
   50 continue
c     Computation of the function and the gradient over the upper
c     triangular elements.
      do 70 j = 1, ny + 1
         do 60 i = 1, nx + 1
            k = nx*(j-1) + i
            vb = zero
            vl = zero
            v = zero
            if (i .le. nx .and. j .gt. 1) vb = x(k-nx)
            if (i .gt. 1 .and. j .le. ny) vl = x(k-1)
            if (i .le. nx .and. j .le. ny) v = x(k)
            dvdx = (v-vl)/hx
            dvdy = (v-vb)/hy
            if (feval) then
               fquad = fquad + dvdx**2 + dvdy**2
               flin = flin - cdiv3*(vb+vl+v)
            end if
            if (geval) then
               if (i .ne. nx+1 .and. j .ne. 1)
     +            fgrad(k-nx) = fgrad(k-nx) - dvdy/hy - cdiv3
               if (i .ne. 1 .and. j .ne. ny+1)
     +            fgrad(k-1) = fgrad(k-1) - dvdx/hx - cdiv3
               if (i .ne. nx+1 .and. j .ne. ny+1)
     +            fgrad(k) = fgrad(k) + dvdx/hx + dvdy/hy - cdiv3
            end if
   60    continue
   70 continue
c     Scale the result.
      if (feval) f = area*(p5*fquad+flin)
      if (geval) then
         do 80 k = 1, nx*ny
            fgrad(k) = area*fgrad(k)
   80    continue
      end if
      end

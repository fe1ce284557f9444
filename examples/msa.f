c     Minimal surface area (after MINPACK-2's dmsafg): the area of the
c     piecewise-linear surface over the unit square's nx x ny interior
c     grid, given the boundary values in bottom, top, left and right.
c     Lower triangles first, then upper triangles, as MINPACK-2 does.
      subroutine msa(nx, ny, x, bottom, top, left, right, f)
      integer nx, ny
      double precision x(nx*ny), bottom(nx+2), top(nx+2)
      double precision left(ny+2), right(ny+2), f
      integer i, j, k
      double precision area, dvdx, dvdy, fl, fu, hx, hy, one, p5
      double precision v, vb, vl, vr, vt
      parameter (one = 1.0d0, p5 = 0.5d0)
      hx = one/dble(nx + 1)
      hy = one/dble(ny + 1)
      area = p5*hx*hy
      fl = 0.0d0
      do 20 j = 0, ny
         do 10 i = 0, nx
            k = nx*(j - 1) + i
            v = 0.0d0
            vr = 0.0d0
            vt = 0.0d0
            if (i .ge. 1 .and. j .ge. 1) then
               v = x(k)
            else
               if (j .eq. 0) v = bottom(i+1)
               if (i .eq. 0) v = left(j+1)
            end if
            if (i .lt. nx .and. j .gt. 0) then
               vr = x(k+1)
            else
               if (i .eq. nx) vr = right(j+1)
               if (j .eq. 0) vr = bottom(i+2)
            end if
            if (i .gt. 0 .and. j .lt. ny) then
               vt = x(k+nx)
            else
               if (i .eq. 0) vt = left(j+2)
               if (j .eq. ny) vt = top(i+1)
            end if
            dvdx = (vr - v)/hx
            dvdy = (vt - v)/hy
            fl = fl + sqrt(one + dvdx**2 + dvdy**2)
   10    continue
   20 continue
      fu = 0.0d0
      do 40 j = 1, ny + 1
         do 30 i = 1, nx + 1
            k = nx*(j - 1) + i
            v = 0.0d0
            vb = 0.0d0
            vl = 0.0d0
            if (i .le. nx .and. j .gt. 1) then
               vb = x(k-nx)
            else
               if (j .eq. 1) vb = bottom(i+1)
               if (i .eq. nx + 1) vb = right(j)
            end if
            if (i .gt. 1 .and. j .le. ny) then
               vl = x(k-1)
            else
               if (j .eq. ny + 1) vl = top(i)
               if (i .eq. 1) vl = left(j+1)
            end if
            if (i .le. nx .and. j .le. ny) then
               v = x(k)
            else
               if (i .eq. nx + 1) v = right(j+1)
               if (j .eq. ny + 1) v = top(i+1)
            end if
            dvdx = (v - vl)/hx
            dvdy = (v - vb)/hy
            fu = fu + sqrt(one + dvdx**2 + dvdy**2)
   30    continue
   40 continue
      f = area*(fl + fu)
      end

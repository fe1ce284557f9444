c IMPLICIT statements: IMPLICIT DOUBLE PRECISION (A-H,O-Z) and
c IMPLICIT INTEGER (N); Newton's method for the cube root, fixed steps.
c adjit-test: --entry cbrt --set a=27 --set nstep=8
c adjit-test: --entry cbrt --set a=2 --set nstep=6
      subroutine cbrt(a, nstep, root, resid)
      implicit double precision (a-h, o-z)
      implicit integer (n)
      root = a
      if (a .gt. 1) root = a/3
      do 10 it = 1, nstep
        root = root - (root**3 - a)/(3*root**2)
   10 continue
      resid = root*root*root - a
      end

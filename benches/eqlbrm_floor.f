C     THE LATENCY FLOOR OF LISTING 1 (EXAMPLES/EQLBRM.F): ITS INNERMOST
C     NEWTON STEP X = X - Y / Y PRIME WITH Y = DH/DB WRITTEN OUT BY HAND
C     IN THE ORDER THE TANGENT OF GMBIGB COMPUTES IT, AND THE CONSTANT
C     Y PRIME = -0.1, WITHOUT THE DERIVATIVES THE LISTING CARRIES BESIDE
C     IT. N = 10**9 STEPS ARE THE LISTING'S N**3 FOR N = 1000:
C       gfortran -O2 benches/eqlbrm_floor.f -o floor
C       printf '50\n1000000000\n' | /usr/bin/time ./floor
      PROGRAM FLOOR
      REAL X, Y, A, PRICE
      INTEGER I, N
      READ *, A
      READ *, N
      X = 1
      DO I = 1, N
        PRICE = 20-0.1*X-0.0999*A
        Y = (PRICE+X*(-0.1))-((10.005-0.05*X)+X*(-0.05))
        X = X - Y/(-0.1)
      END DO
      PRINT *, X
      END

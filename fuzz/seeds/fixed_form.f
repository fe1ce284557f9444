      SUBROUTINE F(X, Y)
      DOUBLE PRECISION X, Y, T
      INTEGER I
      T = X
      DO 10 I = 1, 3
        T = T * X + DBLE(I)
   10 CONTINUE
      Y = T
      END

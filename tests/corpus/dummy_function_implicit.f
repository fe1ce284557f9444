C     A dummy function referenced without EXTERNAL or an interface body
C     (Fortran 77: F is a dummy procedure because it is referenced as a
C     function and is not an array), typed by its declaration (SIMPSON)
C     or implicitly (TWICE); passed on to another procedure as an actual.
C adjit-test: --entry quad --set a=0.5 --set b=2 --set c=1.5
C adjit-test: --entry quad --set a=-1 --set b=1.25 --set c=0.25
      SUBROUTINE QUAD(A, B, C, S)
      DOUBLE PRECISION A, B, C, S, CUBE, WAVE
      EXTERNAL CUBE, WAVE
      DOUBLE PRECISION SIMPSON, TWICE
      S = SIMPSON(CUBE, A, B, C, 8) + TWICE(WAVE, C * B)
      S = S + SIMPSON(WAVE, A, B, C, 4)
      END

      DOUBLE PRECISION FUNCTION SIMPSON(F, A, B, C, N)
      INTEGER N, I
      DOUBLE PRECISION F, A, B, C, H, X
      H = (B - A) / N
      SIMPSON = F(A, C) + F(B, C)
      DO 10 I = 1, N - 1
         X = A + I * H
         IF (MOD(I, 2) .EQ. 1) THEN
            SIMPSON = SIMPSON + 4 * F(X, C)
         ELSE
            SIMPSON = SIMPSON + 2 * F(X, C)
         END IF
   10 CONTINUE
      SIMPSON = SIMPSON * H / 3
      END

      DOUBLE PRECISION FUNCTION TWICE(G, X)
      IMPLICIT DOUBLE PRECISION (A-H, O-Z)
      TWICE = G(G(X, 1D0), X)
      END

      DOUBLE PRECISION FUNCTION CUBE(X, C)
      DOUBLE PRECISION X, C
      CUBE = C * X ** 3 - X
      END

      DOUBLE PRECISION FUNCTION WAVE(X, C)
      DOUBLE PRECISION X, C
      WAVE = SIN(C * X) + X * X
      END

C ODEPACK's conventions in a small explicit integrator (rewritten in
C their style): DEWSET builds the error weights from RTOL / ATOL by
C ITOL (a scalar RTOL passed where RTOL(*) is declared), DVNORM is the
C weighted root-mean-square norm, NEQ is an array whose first element
C is the size, the state lives in COMMON /DLS001/ with a SAVE, and the
C user's F is EXTERNAL with the signature F(NEQ, T, Y, YDOT). Heun's
C steps with the local error estimate's weighted norm; the final state of
C a damped oscillator is differentiated with respect to the initial
C state and the parameters carried in Y's tail (RPAR style).
C adjit-test: --entry oscil --set y0=1,0.2 --set par=0.3,4 --set tout=1.5 --set nstep=60 --set itol=1
C adjit-test: --entry oscil --set y0=0.5,-1 --set par=0.1,9 --set tout=2 --set nstep=80 --set itol=2
      SUBROUTINE OSCIL (Y0, PAR, TOUT, NSTEP, ITOL, Y, ERRMAX)
      EXTERNAL FOSC
      INTEGER NSTEP, ITOL, NEQ(2)
      DOUBLE PRECISION Y0(2), PAR(2), TOUT, Y(4), ERRMAX
      DOUBLE PRECISION RTOL, ATOL(2), T
      NEQ(1) = 2
      NEQ(2) = 0
      Y(1) = Y0(1)
      Y(2) = Y0(2)
      Y(3) = PAR(1)
      Y(4) = PAR(2)
      RTOL = 1.0D-4
      ATOL(1) = 1.0D-2
      ATOL(2) = 1.0D-3
      T = 0.0D0
      CALL DHEUN (FOSC, NEQ, Y, T, TOUT, NSTEP, ITOL, RTOL, ATOL)
      CALL GETERR (ERRMAX)
      RETURN
      END
      SUBROUTINE GETERR (E)
      DOUBLE PRECISION E, ERRMX, H
      INTEGER NST
      COMMON /DLS001/ ERRMX, H, NST
      E = ERRMX
      RETURN
      END
      SUBROUTINE FOSC (NEQ, T, Y, YDOT)
      INTEGER NEQ(*)
      DOUBLE PRECISION T, Y(*), YDOT(*)
C     Y(NEQ(1)+1), Y(NEQ(1)+2): damping and stiffness
      YDOT(1) = Y(2)
      YDOT(2) = -Y(NEQ(1)+1)*Y(2) - Y(NEQ(1)+2)*Y(1)
      RETURN
      END
      SUBROUTINE DHEUN (F, NEQ, Y, T, TOUT, NSTEP, ITOL, RTOL, ATOL)
      EXTERNAL F
      INTEGER NEQ(*), NSTEP, ITOL
      DOUBLE PRECISION Y(*), T, TOUT, RTOL(*), ATOL(*)
      DOUBLE PRECISION ERRMX, H
      INTEGER NST
      COMMON /DLS001/ ERRMX, H, NST
      SAVE /DLS001/
      DOUBLE PRECISION YP(20), F0(20), F1(20), EWT(20), ACOR(20)
      DOUBLE PRECISION DVNORM, E
      INTEGER I, N
      N = NEQ(1)
      YP(N+1) = Y(N+1)
      YP(N+2) = Y(N+2)
      H = (TOUT - T)/NSTEP
      ERRMX = 0.0D0
      DO 40 NST = 1, NSTEP
        CALL DEWSET (N, ITOL, RTOL, ATOL, Y, EWT)
        DO 10 I = 1,N
 10       EWT(I) = 1.0D0/EWT(I)
        CALL F (NEQ, T, Y, F0)
        DO 20 I = 1,N
 20       YP(I) = Y(I) + H*F0(I)
        CALL F (NEQ, T+H, YP, F1)
        DO 30 I = 1,N
          ACOR(I) = 0.5D0*H*(F1(I) - F0(I))
          Y(I) = Y(I) + 0.5D0*H*(F0(I) + F1(I))
 30       CONTINUE
        E = DVNORM (N, ACOR, EWT)
        ERRMX = MAX(ERRMX, E)
        T = T + H
 40     CONTINUE
      RETURN
      END
      SUBROUTINE DEWSET (N, ITOL, RTOL, ATOL, YCUR, EWT)
      INTEGER N, ITOL
      INTEGER I
      DOUBLE PRECISION RTOL, ATOL, YCUR, EWT
      DIMENSION RTOL(*), ATOL(*), YCUR(N), EWT(N)
C
      GO TO (10, 20, 30, 40), ITOL
 10   CONTINUE
      DO 15 I = 1,N
 15     EWT(I) = RTOL(1)*ABS(YCUR(I)) + ATOL(1)
      RETURN
 20   CONTINUE
      DO 25 I = 1,N
 25     EWT(I) = RTOL(1)*ABS(YCUR(I)) + ATOL(I)
      RETURN
 30   CONTINUE
      DO 35 I = 1,N
 35     EWT(I) = RTOL(I)*ABS(YCUR(I)) + ATOL(1)
      RETURN
 40   CONTINUE
      DO 45 I = 1,N
 45     EWT(I) = RTOL(I)*ABS(YCUR(I)) + ATOL(I)
      RETURN
      END
      DOUBLE PRECISION FUNCTION DVNORM (N, V, W)
      INTEGER N,   I
      DOUBLE PRECISION V, W,   SUM
      DIMENSION V(N), W(N)
      SUM = 0.0D0
      DO 10 I = 1,N
 10     SUM = SUM + (V(I)*W(I))**2
      DVNORM = SQRT(SUM/N)
      RETURN
      END

C Old-style code in SLATEC / netlib habits: IMPLICIT DOUBLE PRECISION
C (A-H,O-Z), TAB-format lines, sequence numbers in columns 73-80,
C a first-call flag kept by SAVE and DATA, D1MACH-like constants,
C a statement function, an arithmetic IF, and a series evaluated by
C Chebyshev's recurrence (DCSEVL's style) for a smooth kernel.
C adjit-test: --entry dkern --set x=0.3 --set c=0.5,0.25,-0.125,0.0625,0.03125,-0.015625
C adjit-test: --entry dkern --set x=-0.8 --set c=1,0.5,0.25,0.125,0.0625,0.03125
      SUBROUTINE DKERN (X, C, Y, DY)                                    KER00010
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)                               KER00020
      DIMENSION C(6)                                                    KER00030
	LOGICAL FIRST
	SAVE FIRST, ETA
	DATA FIRST /.TRUE./
C     statement function: the argument mapped to [-1,1]
      SQUASH(T) = T/(1.0D0 + ABS(T))                                    KER00040
	IF (FIRST) THEN
	   ETA = 0.1D0*D1MACH(3)
	   FIRST = .FALSE.
	ENDIF
      NTERMS = INITDS (C, 6, ETA)                                       KER00050
      Z = SQUASH(X)                                                     KER00060
      Y = DCSEVL (Z, C, NTERMS)                                         KER00070
      H = 1.0D-3
      IF (X) 10, 20, 20
   10 DY = (DCSEVL (SQUASH(X+H), C, NTERMS) -
	1   DCSEVL (SQUASH(X-H), C, NTERMS))/(2.0D0*H)
      RETURN
   20 DY = (DCSEVL (SQUASH(X+H), C, NTERMS) - Y)/H
      RETURN
      END
      DOUBLE PRECISION FUNCTION DCSEVL (X, CS, N)                       KER00100
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION CS(*)
      IF (N .LT. 1) STOP 'DCSEVL: NUMBER OF TERMS .LE. 0'
      IF (ABS(X) .GT. 1.0D0 + 1.0D-12) STOP 'DCSEVL: X OUTSIDE (-1,+1)'
      B1 = 0.0D0
      B0 = 0.0D0
      TWOX = 2.0D0*X
      DO 10 I = 1,N
         B2 = B1
         B1 = B0
         NI = N + 1 - I
         B0 = TWOX*B1 - B2 + CS(NI)
   10 CONTINUE
      DCSEVL = 0.5D0*(B0-B2)
      RETURN
      END
      FUNCTION INITDS (OS, NOS, ETA)
      DOUBLE PRECISION OS(*), ETA
      ERR = 0.0
      DO 10 II = 1,NOS
        I = NOS + 1 - II
        ERR = ERR + ABS(REAL(OS(I)))
        IF (ERR.GT.ETA) GO TO 20
   10 CONTINUE
   20 INITDS = I
      RETURN
      END
      DOUBLE PRECISION FUNCTION D1MACH (I)
      INTEGER I
      DOUBLE PRECISION DMACH(5)
      SAVE DMACH
      DATA DMACH / 2.2250738585072014D-308, 1.7976931348623157D+308,
     1  1.1102230246251565D-16, 2.2204460492503131D-16,
     2  0.30102999566398120D0 /
      D1MACH = DMACH(I)
      RETURN
      END

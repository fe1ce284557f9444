* The reference BLAS LSAME (netlib, verbatim) comparing option letters
* case-insensitively with ICHAR, and a DGEMV-like caller that picks
* y := alpha*A*x + beta*y or y := alpha*A**T*x + beta*y by TRANS
* ('N', 'n', 'T', 't', 'C', 'c'); anything else is reported by INFO.
* adjit-test: --entry gemv2 --set trans=N --set alpha=1.5 --set beta=0.5
* adjit-test: --entry gemv2 --set trans=n --set alpha=-2 --set beta=0.25
* adjit-test: --entry gemv2 --set trans=C --set alpha=0.75 --set beta=2
* adjit-test: --entry gemv2 --set trans=N --set alpha=1.25 --set beta=-1
* adjit-test: --entry gemv2 --set trans=c --set alpha=3 --set beta=1
* adjit-test: --entry gemv2 --set trans=x --set alpha=1 --set beta=1
      LOGICAL FUNCTION LSAME(CA,CB)
*
*  -- Reference BLAS level1 routine --
*  -- Reference BLAS is a software package provided by Univ. of Tennessee,    --
*  -- Univ. of California Berkeley, Univ. of Colorado Denver and NAG Ltd..--
*
*     .. Scalar Arguments ..
      CHARACTER CA,CB
*     ..
*
* =====================================================================
*
*     .. Intrinsic Functions ..
      INTRINSIC ICHAR
*     ..
*     .. Local Scalars ..
      INTEGER INTA,INTB,ZCODE
*     ..
*
*     Test if the characters are equal
*
      LSAME = CA .EQ. CB
      IF (LSAME) RETURN
*
*     Now test for equivalence if both characters are alphabetic.
*
      ZCODE = ICHAR('Z')
*
*     Use 'Z' rather than 'A' so that ASCII can be detected on Prime
*     machines, on which ICHAR returns a value with bit 8 set.
*     ICHAR('A') on Prime machines returns 193 which is the same as
*     ICHAR('A') on an EBCDIC machine.
*
      INTA = ICHAR(CA)
      INTB = ICHAR(CB)
*
      IF (ZCODE.EQ.90 .OR. ZCODE.EQ.122) THEN
*
*        ASCII is assumed - ZCODE is the ASCII code of either lower or
*        upper case 'Z'.
*
          IF (INTA.GE.97 .AND. INTA.LE.122) INTA = INTA - 32
          IF (INTB.GE.97 .AND. INTB.LE.122) INTB = INTB - 32
*
      ELSE IF (ZCODE.EQ.233 .OR. ZCODE.EQ.169) THEN
*
*        EBCDIC is assumed - ZCODE is the EBCDIC code of either lower or
*        upper case 'Z'.
*
          IF (INTA.GE.129 .AND. INTA.LE.137 .OR.
     +        INTA.GE.145 .AND. INTA.LE.153 .OR.
     +        INTA.GE.162 .AND. INTA.LE.169) INTA = INTA + 64
          IF (INTB.GE.129 .AND. INTB.LE.137 .OR.
     +        INTB.GE.145 .AND. INTB.LE.153 .OR.
     +        INTB.GE.162 .AND. INTB.LE.169) INTB = INTB + 64
*
      ELSE IF (ZCODE.EQ.218 .OR. ZCODE.EQ.250) THEN
*
*        ASCII is assumed, on Prime machines - ZCODE is the ASCII code
*        plus 128 of either lower or upper case 'Z'.
*
          IF (INTA.GE.225 .AND. INTA.LE.250) INTA = INTA - 32
          IF (INTB.GE.225 .AND. INTB.LE.250) INTB = INTB - 32
      END IF
      LSAME = INTA .EQ. INTB
*
*     RETURN
*
*     End of LSAME
*
      END
*
      SUBROUTINE MYGEMV(TRANS,M,N,ALPHA,A,LDA,X,BETA,Y,INFO)
      CHARACTER TRANS
      INTEGER M,N,LDA,INFO
      DOUBLE PRECISION ALPHA,BETA
      DOUBLE PRECISION A(LDA,*),X(*),Y(*)
      LOGICAL LSAME
      EXTERNAL LSAME
      INTEGER I,J,LENY
      DOUBLE PRECISION TEMP
      INFO = 0
      IF (.NOT.LSAME(TRANS,'N') .AND. .NOT.LSAME(TRANS,'T') .AND.
     +    .NOT.LSAME(TRANS,'C')) THEN
          INFO = 1
          RETURN
      END IF
      IF (LSAME(TRANS,'N')) THEN
          LENY = M
      ELSE
          LENY = N
      END IF
      DO 10 I = 1,LENY
          Y(I) = BETA*Y(I)
   10 CONTINUE
      IF (LSAME(TRANS,'N')) THEN
          DO 30 J = 1,N
              TEMP = ALPHA*X(J)
              DO 20 I = 1,M
                  Y(I) = Y(I) + TEMP*A(I,J)
   20         CONTINUE
   30     CONTINUE
      ELSE
          DO 50 J = 1,N
              TEMP = 0.0D0
              DO 40 I = 1,M
                  TEMP = TEMP + A(I,J)*X(I)
   40         CONTINUE
              Y(J) = Y(J) + ALPHA*TEMP
   50     CONTINUE
      END IF
      END
*
      SUBROUTINE GEMV2(TRANS,ALPHA,BETA,Y1,Y2,INFO)
      CHARACTER TRANS
      DOUBLE PRECISION ALPHA,BETA,Y1,Y2
      INTEGER INFO
      DOUBLE PRECISION A(2,2),X(2),Y(2)
      A(1,1) = 1.0D0
      A(2,1) = -2.0D0
      A(1,2) = 3.0D0
      A(2,2) = 0.5D0
      X(1) = SIN(ALPHA)
      X(2) = 2.0D0
      Y(1) = 1.0D0
      Y(2) = BETA
      CALL MYGEMV(TRANS,2,2,ALPHA,A,2,X,BETA,Y,INFO)
      Y1 = Y(1)
      Y2 = Y(2)
      END

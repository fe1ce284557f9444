c adjit-error: 8:7: ENTRY `evalp` inside a construct
c ENTRY is a statement of a procedure's body, never inside an IF, DO or
c other construct (gfortran refuses it too): a located error.
      SUBROUTINE SETP(A, X, Y)
      DOUBLE PRECISION A, X, Y, P
      SAVE P
      IF (A .GT. 0) THEN
      ENTRY EVALP(X, Y)
      Y = P*X
      END IF
      RETURN
      END

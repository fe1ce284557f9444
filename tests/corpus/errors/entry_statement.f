c adjit-error: 8:7: unsupported Fortran: ENTRY
c ENTRY (a second way into a subprogram, as old libraries set and
c evaluate through one body) is rejected with its location.
      SUBROUTINE SETP(A)
      DOUBLE PRECISION A, X, Y, P
      SAVE P
      P = A
      ENTRY EVALP(X, Y)
      Y = P*X*X
      RETURN
      END

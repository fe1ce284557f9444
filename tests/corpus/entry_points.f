c ENTRY: a subroutine whose second entry point evaluates with the
c parameters the first stored (SAVE variables shared by the entry
c points), a function with an entry returning through the entry name
c (both results are one variable), and an entry that jumps back to a
c label before its ENTRY statement.
c adjit-test: --entry driver --set a=1.5 --set x=0.25
c adjit-test: --entry driver --set a=-0.75 --set x=2
      SUBROUTINE SETP(A, B)
      DOUBLE PRECISION A, B, X, Y, P, Q
      SAVE P, Q
      P = A
      Q = B*A
      RETURN
      ENTRY EVALP(X, Y)
      Y = P*X*X + SIN(Q*X)
      RETURN
      END

      DOUBLE PRECISION FUNCTION F(X)
      DOUBLE PRECISION X, G, Z
      F = X*X
      GO TO 10
      ENTRY G(Z)
      G = Z*Z*Z
   10 G = G + EXP(-G)
      RETURN
      END

      SUBROUTINE ACCUM(N, X, S)
      INTEGER N, I
      DOUBLE PRECISION X(N), S, T
      S = 0
   20 DO 30 I = 1, N
         S = S + X(I)**2
   30 CONTINUE
      RETURN
      ENTRY ACCUMT(N, X, S, T)
      S = T*T
      GO TO 20
      END

      SUBROUTINE DRIVER(A, X, Y, V)
      DOUBLE PRECISION A, X, Y, V(4), W(3), F, G
      CALL SETP(A, 2D0)
      CALL EVALP(X, Y)
      V(1) = F(X)
      V(2) = G(X + A)
      W(1) = X
      W(2) = A
      W(3) = X*A
      CALL ACCUMT(3, W, V(3), Y)
      CALL ACCUM(3, W, V(4))
      END

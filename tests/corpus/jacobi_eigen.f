C Eigenvalues of a real symmetric matrix by Jacobi rotations, in the
C style of Numerical Recipes' JACOBI (rewritten): PARAMETER (NMAX=...),
C arrays A(NP,NP) with a physical dimension, the rotation macro as a
C local subroutine, sweeps with a threshold, convergence by an exact
C underflow test ABS(D(IP))+G .EQ. ABS(D(IP)), GOTO out of nested loops.
C The eigenvalues are differentiated with respect to the matrix: for a
C simple eigenvalue, d(lambda_k)/dA = v_k v_k^T (published).
C adjit-test: --entry eigsym --set n=3 --set a=4,1,0.5,1,3,-0.25,0.5,-0.25,1
C adjit-test: --entry eigsym --set n=4 --set a=2,-1,0,0.3,-1,2,-1,0,0,-1,2,-1,0.3,0,-1,2
      SUBROUTINE EIGSYM(N,A,D,V,NROT)
      INTEGER N,NROT
      DOUBLE PRECISION A(N,N),D(N),V(N,N)
      DOUBLE PRECISION W(4,4),VW(4,4)
      INTEGER I,J
      DO 12 J=1,N
        DO 11 I=1,N
          W(I,J)=A(I,J)
11      CONTINUE
12    CONTINUE
      CALL JACOBI(W,N,4,D,VW,NROT)
      DO 14 J=1,N
        DO 13 I=1,N
          V(I,J)=VW(I,J)
13      CONTINUE
14    CONTINUE
      RETURN
      END
      SUBROUTINE JACOBI(A,N,NP,D,V,NROT)
      INTEGER N,NP,NROT,NMAX
      DOUBLE PRECISION A(NP,NP),D(NP),V(NP,NP)
      PARAMETER (NMAX=500)
      INTEGER I,IP,IQ,J
      DOUBLE PRECISION C,G,H,S,SM,T,TAU,THETA,TRESH,B(NMAX),Z(NMAX)
      DO 12 IP=1,N
        DO 11 IQ=1,N
          V(IP,IQ)=0.D0
11      CONTINUE
        V(IP,IP)=1.D0
12    CONTINUE
      DO 13 IP=1,N
        B(IP)=A(IP,IP)
        D(IP)=B(IP)
        Z(IP)=0.D0
13    CONTINUE
      NROT=0
      DO 24 I=1,50
        SM=0.D0
        DO 15 IP=1,N-1
          DO 14 IQ=IP+1,N
            SM=SM+ABS(A(IP,IQ))
14        CONTINUE
15      CONTINUE
        IF(SM.EQ.0.D0)RETURN
        IF(I.LT.4)THEN
          TRESH=0.2D0*SM/N**2
        ELSE
          TRESH=0.D0
        ENDIF
        DO 22 IP=1,N-1
          DO 21 IQ=IP+1,N
            G=100.D0*ABS(A(IP,IQ))
            IF((I.GT.4).AND.(ABS(D(IP))+G.EQ.ABS(D(IP)))
     *         .AND.(ABS(D(IQ))+G.EQ.ABS(D(IQ))))THEN
              A(IP,IQ)=0.D0
            ELSE IF(ABS(A(IP,IQ)).GT.TRESH)THEN
              H=D(IQ)-D(IP)
              IF(ABS(H)+G.EQ.ABS(H))THEN
                T=A(IP,IQ)/H
              ELSE
                THETA=0.5D0*H/A(IP,IQ)
                T=1.D0/(ABS(THETA)+SQRT(1.D0+THETA**2))
                IF(THETA.LT.0.D0)T=-T
              ENDIF
              C=1.D0/SQRT(1+T**2)
              S=T*C
              TAU=S/(1.D0+C)
              H=T*A(IP,IQ)
              Z(IP)=Z(IP)-H
              Z(IQ)=Z(IQ)+H
              D(IP)=D(IP)-H
              D(IQ)=D(IQ)+H
              A(IP,IQ)=0.D0
              DO 16 J=1,IP-1
                CALL ROTATE(A(J,IP),A(J,IQ),S,TAU)
16            CONTINUE
              DO 17 J=IP+1,IQ-1
                CALL ROTATE(A(IP,J),A(J,IQ),S,TAU)
17            CONTINUE
              DO 18 J=IQ+1,N
                CALL ROTATE(A(IP,J),A(IQ,J),S,TAU)
18            CONTINUE
              DO 19 J=1,N
                CALL ROTATE(V(J,IP),V(J,IQ),S,TAU)
19            CONTINUE
              NROT=NROT+1
            ENDIF
21        CONTINUE
22      CONTINUE
        DO 23 IP=1,N
          B(IP)=B(IP)+Z(IP)
          D(IP)=B(IP)
          Z(IP)=0.D0
23      CONTINUE
24    CONTINUE
      STOP 'too many iterations in jacobi'
      END
      SUBROUTINE ROTATE(X,Y,S,TAU)
      DOUBLE PRECISION X,Y,S,TAU,G,H
      G=X
      H=Y
      X=G-S*(H+G*TAU)
      Y=H+S*(G-H*TAU)
      RETURN
      END

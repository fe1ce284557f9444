c Cubic spline interpolation in the style of Numerical Recipes' SPLINE
c and SPLINT (rewritten): PARAMETER (NMAX=...), a local work array,
c the natural-spline flag yp1 > .99e30, bisection for the bracket with
c a GOTO loop, PAUSE replaced by STOP. The spline of samples of a
c function is evaluated at a point and differentiated with respect to
c the sampled values and the point (d/dya is the cardinal spline).
c adjit-test: --entry interp --set n=6 --set xa=0,0.5,1.1,1.8,2.2,3 --set ya=1,0.6,0.2,-0.3,-0.1,0.5 --set x=1.4
c adjit-test: --entry interp --set n=6 --set xa=0,0.5,1.1,1.8,2.2,3 --set ya=1,0.6,0.2,-0.3,-0.1,0.5 --set x=2.9
      SUBROUTINE INTERP(N,XA,YA,X,Y,YP1)
      INTEGER N
      DOUBLE PRECISION XA(N),YA(N),X,Y,YP1
      DOUBLE PRECISION Y2A(50)
      CALL SPLINE(XA,YA,N,1.D30,YP1,Y2A)
      CALL SPLINT(XA,YA,Y2A,N,X,Y)
      YP1=Y2A(2)
      END
      SUBROUTINE SPLINE(X,Y,N,YP1,YPN,Y2)
      INTEGER N,NMAX
      DOUBLE PRECISION YP1,YPN,X(N),Y(N),Y2(N)
      PARAMETER (NMAX=500)
      INTEGER I,K
      DOUBLE PRECISION P,QN,SIG,UN,U(NMAX)
      IF (YP1.GT..99D30) THEN
        Y2(1)=0.D0
        U(1)=0.D0
      ELSE
        Y2(1)=-0.5D0
        U(1)=(3.D0/(X(2)-X(1)))*((Y(2)-Y(1))/(X(2)-X(1))-YP1)
      ENDIF
      DO 11 I=2,N-1
        SIG=(X(I)-X(I-1))/(X(I+1)-X(I-1))
        P=SIG*Y2(I-1)+2.D0
        Y2(I)=(SIG-1.D0)/P
        U(I)=(6.D0*((Y(I+1)-Y(I))/(X(I+1)-X(I))-(Y(I)-Y(I-1))
     *      /(X(I)-X(I-1)))/(X(I+1)-X(I-1))-SIG*U(I-1))/P
11    CONTINUE
      IF (YPN.GT..99D30) THEN
        QN=0.D0
        UN=0.D0
      ELSE
        QN=0.5D0
        UN=(3.D0/(X(N)-X(N-1)))*(YPN-(Y(N)-Y(N-1))/(X(N)-X(N-1)))
      ENDIF
      Y2(N)=(UN-QN*U(N-1))/(QN*Y2(N-1)+1.D0)
      DO 12 K=N-1,1,-1
        Y2(K)=Y2(K)*Y2(K+1)+U(K)
12    CONTINUE
      RETURN
      END
      SUBROUTINE SPLINT(XA,YA,Y2A,N,X,Y)
      INTEGER N
      DOUBLE PRECISION X,Y,XA(N),Y2A(N),YA(N)
      INTEGER K,KHI,KLO
      DOUBLE PRECISION A,B,H
      KLO=1
      KHI=N
1     IF (KHI-KLO.GT.1) THEN
        K=(KHI+KLO)/2
        IF(XA(K).GT.X)THEN
          KHI=K
        ELSE
          KLO=K
        ENDIF
      GOTO 1
      ENDIF
      H=XA(KHI)-XA(KLO)
      IF (H.EQ.0.D0) STOP 'bad xa input in splint'
      A=(XA(KHI)-X)/H
      B=(X-XA(KLO))/H
      Y=A*YA(KLO)+B*YA(KHI)+((A**3-A)*Y2A(KLO)+(B**3-B)*Y2A(KHI))*(H**
     *2)/6.D0
      RETURN
      END

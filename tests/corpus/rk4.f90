! Classical Runge-Kutta for a damped oscillator y'' + c y' + k y = 0 written
! as a 2-D system, with a right-hand side subroutine called four times per
! step, array temporaries and a PRINT statement (list-directed output,
! compared with gfortran's).
! adjit-test: --entry rk4 --set nsteps=20 --set h=0.05 --set y=1,0 --set c=0.3 --set k=4
! adjit-test: --entry rk4 --set nsteps=5 --set h=0.1 --set y=0,1 --set c=0 --set k=1
subroutine rk4(nsteps, h, y, c, k, t)
  implicit none
  integer, intent(in) :: nsteps
  double precision, intent(in) :: h, c, k
  double precision, intent(inout) :: y(2)
  double precision, intent(out) :: t
  double precision :: k1(2), k2(2), k3(2), k4(2), ytmp(2)
  integer :: step
  t = 0
  do step = 1, nsteps
    call rhs(y, c, k, k1)
    ytmp = y + 0.5d0*h*k1
    call rhs(ytmp, c, k, k2)
    ytmp = y + 0.5d0*h*k2
    call rhs(ytmp, c, k, k3)
    ytmp = y + h*k3
    call rhs(ytmp, c, k, k4)
    y = y + h/6*(k1 + 2*k2 + 2*k3 + k4)
    t = t + h
  end do
  print *, 'rk4 finished at t =', t
end subroutine rk4

subroutine rhs(y, c, k, dy)
  implicit none
  double precision, intent(in) :: y(2), c, k
  double precision, intent(out) :: dy(2)
  dy(1) = y(2)
  dy(2) = -c*y(2) - k*y(1)
end subroutine rhs

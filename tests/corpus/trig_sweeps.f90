! Sines and cosines in loops, as a rotation and damping filter is written:
! a helper fills work arrays with cos(x(i)) and sin(x(i)/2) (element
! stores, whose reverse sweep skips zero adjoints), then a loop combines
! them with sin(w*x(i)) into y(i) and folds y into a running product of
! cosines and a sum of sines (scalar stores), damped by a factor.
! The adjoint stores each sin / cos result and the sine or cosine its
! partial needs, so the reverse sweep calls neither.
! adjit-test: --entry filter --set n=6 --set x=0.3,1.1,-0.7,2.5,0.05,-1.9 --set w=0.8 --set damp=0.1
! adjit-test: --entry filter --set n=3 --set x=1,2,3 --set w=-1.5 --set damp=0.25
module trig_sweeps_m
  implicit none
contains
  subroutine rotate(n, x, c, s)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8), intent(out) :: c(n), s(n)
    integer :: i
    do i = 1, n
      c(i) = cos(x(i))
      s(i) = sin(x(i)*0.5d0)
    end do
  end subroutine rotate

  subroutine filter(n, x, w, y, e, damp)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n), w
    real(8), intent(out) :: y(n), e
    real(8), intent(in) :: damp
    real(8) :: c(n), s(n), d, g
    integer :: i
    d = damp
    call rotate(n, x, c, s)
    e = 1
    g = 0
    do i = 1, n
      y(i) = w*c(i) - sin(w*x(i))*s(i)
      e = e*cos(y(i)*d)
      g = g + sin(e)*d
    end do
    e = e + g
  end subroutine filter
end module trig_sweeps_m

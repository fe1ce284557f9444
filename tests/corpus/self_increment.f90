! Self-increments and library calls in the reverse sweep: `y(i) = y(i) + e`
! and `s = s - e` (the left side's adjoint is kept, not reset and re-added),
! a left side read twice (`y(k) = y(k) + 2*y(k)`), a possible alias
! (`y(i) = y(i) + y(j)*x(i)` with j = i on one trip), a reversed difference
! (`y(i) = x(i) - y(i)`, partial -1), and exp, log, sin, cos, tanh whose
! results the forward sweep stores for the reverse sweep, twice in one
! statement and across statements.
! adjit-test: --entry incr --set n=5 --set j=3 --set k=2 --set x=0.3,-0.7,1.1,0.25,-0.4 --set y=1,2,-1,0.5,3 --set s=0.75
! adjit-test: --entry incr --set n=3 --set j=1 --set k=3 --set x=2.5,0.125,-1.5 --set y=-0.5,0.25,4 --set s=-2
subroutine incr(n, j, k, x, y, s)
  implicit none
  integer, intent(in) :: n, j, k
  double precision, intent(in) :: x(n)
  double precision, intent(inout) :: y(n), s
  integer i
  do i = 1, n
    y(i) = y(i) + exp(x(i)) * x(i)
    y(i) = y(i) - log(1 + x(i)**2) + 0.5d0 * exp(x(i) / 2)
    s = s + sin(x(i)) * cos(x(i)) + sin(x(i))
    y(i) = x(i) - y(i)
  end do
  y(k) = y(k) + 2 * y(k)
  do i = 2, n
    y(i) = y(i) + y(j) * tanh(x(i))
    s = s - y(i-1) * cos(s)
  end do
end subroutine incr

! DO WHILE: bisection for the root of a cubic (pure arithmetic, no libm),
! and an integer Collatz count; the condition is evaluated before each trip.
! adjit-test: --entry bisect --set lo=0 --set hi=3 --set tol=1e-12 --set start=27
! adjit-test: --entry bisect --set lo=-4 --set hi=-1 --set tol=1e-6 --set start=1
subroutine bisect(lo, hi, tol, start, root, iters, steps)
  implicit none
  double precision, intent(in) :: lo, hi, tol
  integer, intent(in) :: start
  double precision, intent(out) :: root
  integer, intent(out) :: iters, steps
  double precision :: a, b, fa, fm
  integer :: k
  a = lo
  b = hi
  fa = a**3 - 2*a - 5
  iters = 0
  do while (b - a > tol)
    root = 0.5d0*(a + b)
    fm = root**3 - 2*root - 5
    if (fm*fa > 0) then
      a = root
      fa = fm
    else
      b = root
    end if
    iters = iters + 1
  end do
  root = 0.5d0*(a + b)
  k = start
  steps = 0
  do while (k /= 1)
    if (mod(k, 2) == 0) then
      k = k/2
    else
      k = 3*k + 1
    end if
    steps = steps + 1
  end do
end subroutine bisect

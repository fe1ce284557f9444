! Rounding and remainder intrinsics on positive, negative and half-way
! values: INT NINT AINT ANINT FLOOR CEILING MOD MODULO SIGN DIM, integer and
! real forms.
! adjit-test: --entry rounding --set n=6 --set x=2.5,-2.5,3.7,-3.7,0.5,-0.49 --set i=7 --set j=-3
! adjit-test: --entry rounding --set n=2 --set x=1.5,-1e3 --set i=-8 --set j=5
subroutine rounding(n, x, i, j, ir, r, im)
  implicit none
  integer, intent(in) :: n, i, j
  double precision, intent(in) :: x(n)
  integer, intent(out) :: ir(4, n), im(6)
  double precision, intent(out) :: r(6, n)
  integer :: k
  do k = 1, n
    ir(1, k) = int(x(k))
    ir(2, k) = nint(x(k))
    ir(3, k) = floor(x(k))
    ir(4, k) = ceiling(x(k))
    r(1, k) = aint(x(k))
    r(2, k) = anint(x(k))
    r(3, k) = mod(x(k), 1.5d0)
    r(4, k) = modulo(x(k), 1.5d0)
    r(5, k) = sign(2.0d0, x(k)) + sign(x(k), -1.0d0)
    r(6, k) = dim(x(k), 0.5d0) + dim(0.5d0, x(k))
  end do
  im(1) = mod(i, j)
  im(2) = modulo(i, j)
  im(3) = sign(i, j)
  im(4) = dim(i, j)
  im(5) = mod(-i, j) + modulo(-i, j)
  im(6) = sign(3, -i)
end subroutine rounding

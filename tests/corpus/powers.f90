! Powers: integer ** integer (positive, zero and negative exponents, negative
! base), real ** integer, real ** real, real ** negative integer,
! integer*8 powers, and x**0.5 vs sqrt.
! adjit-test: --entry powers --set i=3 --set n=4 --set x=1.1 --set y=2.5
! adjit-test: --entry powers --set i=-2 --set n=5 --set x=0.5 --set y=0.3
subroutine powers(i, n, x, y, ip, rp, big)
  implicit none
  integer, intent(in) :: i, n
  double precision, intent(in) :: x, y
  integer, intent(out) :: ip(5)
  double precision, intent(out) :: rp(7)
  integer(8), intent(out) :: big
  integer(8) :: ib
  ip(1) = i**n
  ip(2) = i**0
  ip(3) = i**(-1)
  ip(4) = (-1)**n + 1**(-n)
  ip(5) = 2**(n + 10)
  rp(1) = x**n
  rp(2) = x**(-n)
  rp(3) = x**y
  rp(4) = y**0.5d0 + sqrt(y)
  rp(5) = x**2.0d0
  rp(6) = dble(i)**3
  rp(7) = (x*y)**(1.0d0/3)
  ib = i
  big = ib**(3*n)
end subroutine powers

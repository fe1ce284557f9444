! Operator precedence: ** is right-associative and binds tighter than unary
! minus; * and / are left-associative; unary minus after a binary operator
! is an extension gfortran accepts in parenthesised form only, so it stays
! parenthesised here; relational below arithmetic, .not. below relational.
! adjit-test: --entry prec --set a=2 --set b=3 --set c=0.5 --set n=2
! adjit-test: --entry prec --set a=-1.5 --set b=2 --set c=4 --set n=3
subroutine prec(a, b, c, n, r, l)
  implicit none
  double precision, intent(in) :: a, b, c
  integer, intent(in) :: n
  double precision, intent(out) :: r(10)
  logical, intent(out) :: l(3)
  r(1) = -a**2
  r(2) = 2**3**2 + 0*a
  r(3) = a/b/c
  r(4) = a/b*c
  r(5) = a - b - c
  r(6) = -a*b + c
  r(7) = a**(-n) + b**n**2
  r(8) = (-a)**n - a**n
  r(9) = a + b*c**2/4 - (a - b)*(-c)
  r(10) = abs(a)**c**0.5d0
  l(1) = a + b > c .and. .not. a < 0
  l(2) = .not. a > b .or. b > c .and. c > a
  l(3) = a*b >= -c .eqv. n == 2
end subroutine prec

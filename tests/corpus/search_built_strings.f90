! Character data of run-time length built inside an expression, as the
! argument of another intrinsic: a character function result of
! non-constant length as the substring or set of INDEX, SCAN and VERIFY
! and as the argument of REPEAT; ADJUSTL, ADJUSTR and REPEAT of data of
! run-time length (REPEAT with a computed number of copies) under LEN,
! LEN_TRIM, INDEX, SCAN and VERIFY; `//` with parts of run-time length as
! their argument; TRIM and ADJUSTL of such data as actual arguments (of
! their own length). The positions found steer real arithmetic.
! adjit-test: --entry probe --set s=ab --set k=2 --set x=1.5
! adjit-test: --entry probe --set s=newt --set k=3 --set x=-0.5
! adjit-test: --entry probe --set s=wd --set k=0 --set x=0.75
module built_strings
  implicit none
contains
  function framed(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s) + 2) :: r
    r = ' ' // s
  end function framed

  integer function width(t)
    character(len=*), intent(in) :: t
    width = len(t) + 10*len_trim(t)
  end function width
end module built_strings

subroutine probe(s, k, x, y, t, n)
  use built_strings
  implicit none
  character(len=*), intent(in) :: s
  integer, intent(in) :: k
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=16), intent(out) :: t
  integer, intent(out) :: n(14)
  n(1) = index('xx ab  newt w d ', framed(s)) + 100*index(s // framed(s), framed(s), back=.true.)
  n(2) = scan('the quick brown', framed(s)) + 100*scan('aeiou', framed(s), back=.true.)
  n(3) = verify(s // 'abc', framed(s)) + 100*verify('  abcdenw', framed(s), .true.)
  n(4) = len(repeat(s, k)) + 100*len(repeat(framed(s), k + 1))
  n(5) = len_trim(repeat(framed(s), k)) + 100*index(repeat(s, k), 'b', back=.true.)
  n(6) = index(adjustr(s), 'w') + 100*scan(adjustl(s // '#'), '#')
  n(7) = index(s // '-' // s, '-') + 100*verify(trim(s) // '  ', ' ', back=.true.)
  n(8) = len_trim(adjustr(s)) + 100*len(adjustl(s // s)) + 1000*len(trim(s // ' '))
  n(9) = index(repeat(trim(s) // '.', k + 1), '.', back=.true.)
  n(10) = scan(adjustr(repeat(s, 2)), 'w') + 100*len_trim(adjustl(repeat(s, k)))
  n(11) = index(adjustl(framed(s)), trim(adjustl(s)))
  n(12) = len(repeat(trim(adjustl(framed(s))), k)) + 100*index(s, framed('w'))
  n(13) = width(trim(framed(s))) + 1000*width(adjustl(framed(s) // s))
  n(14) = width(repeat(framed(s), k)) + 1000*width(adjustr(trim(s) // ' '))
  t = repeat(framed(s), k) // '|'
  y = x * n(1) + x**2 * n(6) + sin(x) * len_trim(repeat(s // framed(s), k))
  if (index(repeat(s, k) // 'w', 'w') > len(s)) y = y * exp(x)
  print *, n(1), n(4), len(repeat(s, k)), '[', repeat(framed(s), k), ']'
end subroutine probe

! ADJUSTL, ADJUSTR, INDEX, SCAN, VERIFY (with BACK=) and LEN_TRIM of
! the result of a character function whose result length is not a
! constant (`character(len=len(s) + 4) :: r`): assigned, concatenated,
! compared, as a SELECT CASE selector, as an actual argument, printed and
! in arithmetic; the positions found steer real arithmetic.
! adjit-test: --entry locate --set s=ab --set x=1.5
! adjit-test: --entry locate --set s=newton --set x=-0.5
! adjit-test: --entry locate --set s=dw --set x=0.75
module framing
  implicit none
contains
  function framed(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s) + 4) :: r
    r = '  ' // s
  end function framed

  integer function width(t)
    character(len=*), intent(in) :: t
    width = len(t) + 10*len_trim(t)
  end function width
end module framing

subroutine locate(s, x, y, t, u, n)
  use framing
  implicit none
  character(len=*), intent(in) :: s
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=12), intent(out) :: t, u
  integer, intent(out) :: n(9)
  t = adjustl(framed(s)) // '|'
  u = '<' // adjustr(framed(s))
  n(1) = index(framed(s), 'w')
  n(2) = index(framed(s), 'n', back=.true.)
  n(3) = scan(framed(s), 'aeiou') + 100*scan(framed(s), 'aeiou', .true.)
  n(4) = verify(framed(s), ' ') + 100*verify(framed(s), ' ', back=.true.)
  n(5) = len_trim(adjustl(framed(s))) + 100*len_trim(adjustr(framed(s)))
  n(6) = width(adjustl(framed(s))) + 1000*width(adjustr(framed(s)))
  n(7) = index(adjustl(framed(s)), 'to') + 100*index(framed(s), '')
  n(8) = len(adjustr(framed(s))) + 100*index(framed(s), '', back=.true.)
  n(9) = len_trim(trim(adjustl(framed(s)))) + 100*scan(adjustr(framed(s)), 'b')
  y = x * index(framed(s), 'b') + x**2 * scan(framed(s), 'nw', back=.true.)
  if (adjustl(framed(s)) == 'ab') y = y + sin(x)
  if (adjustr(framed(s)) > '    d') y = y * exp(x)
  select case (adjustl(framed(s)))
  case ('ab')
    y = y * 2
  case ('newton')
    y = y - x**3
  case default
    y = y + 1
  end select
  print *, '[', adjustl(framed(s)), ']', '[', adjustr(framed(s)), ']', &
    '[', trim(adjustl(framed(s))), ']', index(framed(s), 't'), scan(framed(s), 'n', .true.)
end subroutine locate

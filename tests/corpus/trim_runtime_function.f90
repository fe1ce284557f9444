! TRIM and LEN_TRIM of the result of a character function whose result
! length is not a constant (`character(len=len(s) + 3) :: r`): assigned,
! concatenated, compared, as a SELECT CASE selector, printed, and LEN_TRIM
! in arithmetic and conditions; the lengths steer real arithmetic.
! adjit-test: --entry shape --set s=ab --set x=1.5
! adjit-test: --entry shape --set s=newton --set x=-0.5
module padding
  implicit none
contains
  function padded(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s) + 3) :: r
    r = s
  end function padded
end module padding

subroutine shape(s, x, y, t, n)
  use padding
  implicit none
  character(len=*), intent(in) :: s
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=20), intent(out) :: t
  integer, intent(out) :: n
  t = trim(padded(s)) // '|'
  n = len_trim(padded(s))
  y = x * len_trim(padded(s // '  ')) + sin(x)
  if (trim(padded(s)) == 'ab') y = y + x**2
  if (len_trim(padded(s)) > 3) y = y * exp(x)
  select case (trim(padded(s)))
  case ('ab')
    y = y * 2
  case ('newton')
    y = y - x**3
  end select
  print *, '[', trim(padded(s)), ']', len_trim(padded(s))
end subroutine shape

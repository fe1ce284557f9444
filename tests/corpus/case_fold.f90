! Case folding in modern style with IACHAR and ACHAR: a method name is
! folded to lower case character by character (assignment to substrings),
! compared, used as a SELECT CASE selector and passed on; a checksum of
! its codes (IACHAR with KIND=8, ICHAR) steers a real result. ACHAR builds
! characters from computed codes in `//`, PRINT, actual arguments and
! named constants.
! adjit-test: --entry pick --set name=Newton --set x=1.5
! adjit-test: --entry pick --set name=SINE --set x=-0.75
! adjit-test: --entry pick --set name=eXp --set x=0.5
! adjit-test: --entry pick --set name=other --set x=2
module case_tools
  implicit none
  integer, parameter :: shift = iachar('a') - iachar('A')
  character, parameter :: bang = achar(33)
contains
  pure function lower(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    integer :: i, c
    r = s
    do i = 1, len(s)
      c = iachar(s(i:i))
      if (c >= iachar('A') .and. c <= iachar('Z')) r(i:i) = achar(c + shift)
    end do
  end function lower

  subroutine upper_in_place(s)
    character(len=*), intent(inout) :: s
    integer :: i
    do i = 1, len_trim(s)
      select case (s(i:i))
      case ('a':'z')
        s(i:i) = achar(iachar(s(i:i)) - iachar('a') + iachar('A'), kind=1)
      end select
    end do
  end subroutine upper_in_place

  integer(8) function checksum(s)
    character(len=*), intent(in) :: s
    integer :: i
    checksum = 0
    do i = 1, len_trim(s)
      checksum = 31_8 * mod(checksum, 1000003_8) + iachar(s(i:i), kind=8)
    end do
  end function checksum

  logical function is_digit(c)
    character, intent(in) :: c
    is_digit = ichar(c) >= ichar('0') .and. ichar(c) <= ichar('9')
  end function is_digit
end module case_tools

subroutine pick(name, x, y, code, shout)
  use case_tools
  implicit none
  character(len=8), intent(in) :: name
  double precision, intent(in) :: x
  double precision, intent(out) :: y
  integer, intent(out) :: code
  character(len=8), intent(out) :: shout
  character(len=8) :: folded
  character(len=3) :: tag
  character :: d
  integer :: k
  folded = lower(name)
  shout = name
  call upper_in_place(shout)
  code = int(mod(checksum(folded), 997_8))
  tag = achar(iachar('a') + mod(code, 26)) // char(48 + mod(code, 10)) // bang
  print *, 'folded=', folded, ' shout=', shout, ' tag=', tag, ' code=', code
  d = tag(2:2)
  print *, 'digit? ', is_digit(d), is_digit(achar(iachar('a') + mod(code, 26))), &
    is_digit(char(48 + mod(code, 10), kind=1)), achar(65 + mod(code, 3))
  select case (lower(trim(name)))
  case ('newton')
    y = x - (x**3 - 2d0) / (3d0 * x**2)
  case ('sine')
    y = x * sin(x)
  case default
    if (folded(1:1) == achar(101)) then
      y = exp(x / 2d0)
    else
      y = x**2
    end if
  end select
  do k = 1, len_trim(folded)
    if (ichar(folded(k:k)) == iachar(shout(k:k)) + 32) y = y + 0.125d0 * x
  end do
end subroutine pick

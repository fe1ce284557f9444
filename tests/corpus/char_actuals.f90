! Character expressions of run-time length as actual arguments of
! `character(len=*)` dummies: TRIM, `//` with parts of run-time length,
! ADJUSTL / ADJUSTR of a `character(len=*)` dummy, REPEAT with a computed
! number of copies, also assigned; `//` as an operand of comparisons, in SELECT CASE
! selectors, PRINT items and intrinsic arguments. The names steer which
! formula computes the real result.
! adjit-test: --entry drive --set mode=1 --set n=2 --set x=1.25
! adjit-test: --entry drive --set mode=2 --set n=0 --set x=-0.5
! adjit-test: --entry drive --set mode=3 --set n=3 --set x=0.75
! adjit-test: --entry drive --set mode=4 --set n=1 --set x=2.0
module text_args
  implicit none
contains
  ! The length of its argument and a code of its text.
  subroutine measure(s, n, code)
    character(len=*), intent(in) :: s
    integer, intent(out) :: n, code
    integer :: i
    character(len=*), parameter :: alpha = "abcdefghijklmnopqrstuvwxyz!|-:"
    n = len(s)
    code = 0
    do i = 1, len(s)
      code = mod(code * 37 + index(alpha, s(i:i)), 100003)
    end do
  end subroutine measure

  real(8) function pick(rule, x)
    character(len=*), intent(in) :: rule
    real(8), intent(in) :: x
    select case (rule)
    case ('rule:sin')
      pick = sin(x) * x
    case ('rule:exp')
      pick = exp(0.5d0 * x)
    case ('rule:poly')
      pick = x**3 - 2d0 * x
    case default
      pick = real(len(rule), 8) * x
    end select
  end function pick

  subroutine shout(msg, x, y)
    character(len=*), intent(in) :: msg
    real(8), intent(in) :: x
    real(8), intent(inout) :: y
    print '(a,a,a,i3)', '[', msg, ']', len(msg)
    if (msg(1:1) == ' ') then
      y = y + x
    else
      y = y * (1d0 + 0.1d0 * len(msg))
    end if
  end subroutine shout

  subroutine relay(word, n, x, y, lens, codes)
    character(len=*), intent(in) :: word
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8), intent(inout) :: y
    integer, intent(out) :: lens(6), codes(6)
    call measure(trim(word), lens(1), codes(1))
    call measure(word // '|' // trim(word), lens(2), codes(2))
    call measure(adjustl(word), lens(3), codes(3))
    call measure(adjustr(word), lens(4), codes(4))
    call measure(repeat(trim(adjustl(word)), n), lens(5), codes(5))
    call measure(repeat('ab', n) // trim(word), lens(6), codes(6))
    call shout(adjustr(word), x, y)
    call shout(trim(adjustl(word)) // '!', x, y)
    y = y + pick('rule:' // trim(adjustl(word)), x)
  end subroutine relay
end module text_args

subroutine drive(mode, n, x, y, k, lens, codes, tag)
  use text_args
  implicit none
  integer, intent(in) :: mode, n
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  integer, intent(out) :: k, lens(6), codes(6)
  character(len=12), intent(out) :: tag
  character(len=8) :: words(4)
  character(len=8) :: w
  character(len=3) :: a, b
  words(1) = '  sin'
  words(2) = 'exp  '
  words(3) = ' poly '
  words(4) = '   other'
  w = words(mode)
  y = x
  call relay(w, n, x, y, lens, codes)
  a = 'ab'
  b = trim(adjustl(w))
  k = 0
  if (a // b == 'ab' // trim(adjustl(w))) k = k + 1
  if (trim(a) // b == 'ab' // b) k = k + 10
  if (trim(a) // 'x' < trim(b) // 'x') k = k + 100
  select case (trim(b) // '.')
  case ('sin.', 'exp.')
    k = k + 1000
  case default
    k = k + 2000
  end select
  k = k + 10000 * index(a // b, trim(b))
  tag = a // '-' // b // '-'
  print *, a // b, len(a // b), '|', trim(a // '|' // b)
  y = y + pick('rule:' // b, 2d0 * x)
  tag = repeat('=', n) // adjustr(w(1:n+2)) // '|'
  print *, '[', tag, ']'
  tag(3:) = adjustr(w(n+1:)) // repeat('-', n)
  print *, '[', tag, ']'
end subroutine drive

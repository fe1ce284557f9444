! Functions returning deferred-length CHARACTER (`character(len=:),
! allocatable :: r`): a text module upper-cases a name (`to_upper`), joins
! two words with an optional separator (`join`), writes an integer's
! digits (`digits`, grown one digit at a time) and builds a label
! (`make_key(name, i)`, itself made of such references). The results are
! assigned, compared, used as SELECT CASE selectors, concatenated, passed
! as actual arguments to `len=*` dummies and measured by LEN, TRIM and
! INDEX; the method they name picks the real-valued model whose derivative
! is checked.
! adjit-test: --entry evaluate --set method=newton --set level=3 --set x=0.5
! adjit-test: --entry evaluate --set method=Secant --set level=12 --set x=-0.75
! adjit-test: --entry evaluate --set method=bisect --set level=0 --set x=1.25
! adjit-test: --entry evaluate --set method=other --set level=407 --set x=2.0
module text_funcs
  implicit none
contains
  ! `s` with its lower-case letters upper-cased.
  function to_upper(s) result(r)
    character(len=*), intent(in) :: s
    character(len=:), allocatable :: r
    integer :: i, c
    r = s
    do i = 1, len(r)
      c = ichar(r(i:i))
      if (c >= 97 .and. c <= 122) r(i:i) = char(c - 32)
    end do
  end function to_upper

  ! `a` and `b`, with `sep` between them when it is given.
  function join(a, b, sep) result(r)
    character(len=*), intent(in) :: a, b
    character(len=*), intent(in), optional :: sep
    character(len=:), allocatable :: r
    if (present(sep)) then
      r = a // sep // b
    else
      r = a // b
    end if
  end function join

  ! The decimal digits of `i`.
  function digits(i) result(d)
    integer, intent(in) :: i
    character(len=:), allocatable :: d
    integer :: k
    k = abs(i)
    d = char(48 + mod(k, 10))
    k = k / 10
    do while (k > 0)
      d = char(48 + mod(k, 10)) // d
      k = k / 10
    end do
    if (i < 0) d = '-' // d
  end function digits

  ! The label `NAME:i` of a method and a level.
  function make_key(name, i) result(key)
    character(len=*), intent(in) :: name
    integer, intent(in) :: i
    character(len=:), allocatable :: key
    key = join(to_upper(trim(adjustl(name))), digits(i), ':')
  end function make_key

  ! The weight of a label: its length and where its `:` is.
  real(8) function weight(label)
    character(len=*), intent(in) :: label
    weight = len(label) + 0.25d0 * index(label, ':')
  end function weight

  subroutine evaluate(method, level, x, y, n)
    character(len=*), intent(in) :: method
    integer, intent(in) :: level
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: n
    character(len=:), allocatable :: key, tag
    key = make_key(method, level)
    select case (to_upper(trim(method)))
    case ('NEWTON')
      y = x * x
    case ('SECANT')
      y = sin(x)
    case ('BISECT')
      y = exp(x)
    case default
      y = x
    end select
    if (key == join(to_upper(trim(method)), digits(level), ':')) y = y + weight(key) * x
    tag = join('m', digits(level))
    if (to_upper(tag) /= 'M' // digits(level)) y = -y
    y = y * len(join(key, tag, '/'))
    y = y + 0.5d0 * weight(to_upper(method)) * x
    n = index(make_key(method, level), ':') + 100 * len(trim(join(tag, '   ')))
    print *, 'key=', key, ' tag=', tag, ' ', to_upper(method) // '!'
  end subroutine evaluate
end module text_funcs

! Character data of run-time length without a variable of its own:
! character functions whose result length is not a constant
! (`character(len=len(s))`, `len=len_trim(s)`, `len=len(s) + n`) in
! assignments, comparisons, SELECT CASE selectors, `//`, actual arguments
! and PRINT; `//` of parts of run-time length in comparisons and SELECT
! CASE (with a range); ADJUSTR and REPEAT of run-time length in PRINT.
! An options parser picks the solver's formula by
! `lower(trim(method)) // '_' // kind`.
! adjit-test: --entry drive --set mode=1 --set x=1.5
! adjit-test: --entry drive --set mode=2 --set x=0.5
! adjit-test: --entry drive --set mode=3 --set x=-0.75
! adjit-test: --entry drive --set mode=4 --set x=2.0
module text_util
  implicit none
contains
  ! `s` in upper case.
  function upper(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    integer :: i, k
    character(len=26) :: lo, up
    lo = 'abcdefghijklmnopqrstuvwxyz'
    up = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
    r = s
    do i = 1, len(s)
      k = index(lo, s(i:i))
      if (k > 0) r(i:i) = up(k:k)
    end do
  end function upper

  ! `s` in lower case.
  function lower(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    integer :: i, k
    character(len=26) :: lo, up
    lo = 'abcdefghijklmnopqrstuvwxyz'
    up = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
    r = s
    do i = 1, len(s)
      k = index(up, s(i:i))
      if (k > 0) r(i:i) = lo(k:k)
    end do
  end function lower

  ! `s` without its trailing blanks.
  function stripped(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len_trim(s)) :: r
    r = s
  end function stripped

  ! `s` followed by `n` dots.
  function dotted(s, n) result(r)
    character(len=*), intent(in) :: s
    integer, intent(in) :: n
    character(len=len(s) + max(n, 0)) :: r
    r = s // repeat('.', max(n, 0))
  end function dotted

  ! The length of `s` and a code of its text.
  subroutine measure(s, n, code)
    character(len=*), intent(in) :: s
    integer, intent(out) :: n, code
    integer :: i
    character(len=*), parameter :: alpha = "abcdefghijklmnopqrstuvwxyz_.ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    n = len(s)
    code = 0
    do i = 1, len(s)
      code = mod(code * 37 + index(alpha, s(i:i)), 100003)
    end do
  end subroutine measure
end module text_util

module solver_opts
  use text_util
  implicit none
contains
  ! One evaluation of the formula the options name.
  subroutine solve(method, kind, x, y, k)
    character(len=*), intent(in) :: method, kind
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: k
    character(len=12) :: tag
    tag = upper(method) // '!'
    k = len_trim(tag)
    select case (lower(trim(method)) // '_' // kind)
    case ('newton_fast')
      y = x**3
    case ('newton_safe', 'bisect_safe')
      y = sin(x) * x
    case ('p':'r')
      y = x**2 + 1d0
    case default
      y = exp(x / 2)
    end select
    if (trim(method) // '-' // kind == 'Newton-fast') y = y + x
    if (upper(kind) == 'FAST') y = y + 2 * x
    if (kind // 'x' < 'q') y = y + 3 * x
    if (dotted(stripped(method), 2) /= 'bisect..') k = k + 100
    print *, 'method: ', upper(trim(method)) // '/' // lower(kind), ' tag ', tag
    print *, '[', adjustr(kind), ']', repeat(trim(kind), 2), '|', stripped(method), '|'
  end subroutine solve
end module solver_opts

subroutine drive(mode, x, y, k, lens, codes, label)
  use solver_opts
  implicit none
  integer, intent(in) :: mode
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  integer, intent(out) :: k, lens(3), codes(3)
  character(len=16), intent(out) :: label
  character(len=8) :: methods(4), kinds(4), method, kind
  methods(1) = 'Newton'
  methods(2) = 'bisect'
  methods(3) = 'Quasi'
  methods(4) = 'other'
  kinds(1) = 'fast'
  kinds(2) = 'safe'
  kinds(3) = 'x'
  kinds(4) = 'fast'
  method = methods(mode)
  kind = kinds(mode)
  call solve(trim(method), trim(kind), x, y, k)
  call measure(upper(method), lens(1), codes(1))
  call measure(lower(trim(method)) // '_' // stripped(kind), lens(2), codes(2))
  call measure(dotted(trim(kind), mode), lens(3), codes(3))
  label = dotted(stripped(method), 3) // upper(kind)
end subroutine drive

! Character intrinsics: TRIM, ADJUSTL, ADJUSTR and REPEAT in comparisons,
! SELECT CASE selectors, concatenations, assignments, PRINT and as actual
! arguments of `character(len=*)` dummies; LEN_TRIM, SCAN, VERIFY and INDEX
! (with BACK=) of character data of run-time length. An option chosen by
! name steers which formula computes the real result.
! adjit-test: --entry options --set mode=1 --set x=1.5
! adjit-test: --entry options --set mode=2 --set x=-0.75
! adjit-test: --entry options --set mode=3 --set x=2.25
! adjit-test: --entry options --set mode=4 --set x=0.5
module text_tools
  implicit none
contains
  integer function words_in(s)
    character(len=*), intent(in) :: s
    integer :: i
    logical :: inword
    words_in = 0
    inword = .false.
    i = 1
    do while (i <= len_trim(s))
      if (s(i:i) /= ' ' .and. .not. inword) words_in = words_in + 1
      inword = s(i:i) /= ' '
      i = i + 1
    end do
  end function words_in

  subroutine measure(s, lt, first, last, sc, sb, vf, vb, ib)
    character(len=*), intent(in) :: s
    integer, intent(out) :: lt, first, last, sc, sb, vf, vb, ib
    lt = len_trim(s)
    first = verify(s, ' ')
    last = verify(s, ' ', back=.true.)
    sc = scan(s, 'aeiou')
    sb = scan(s, 'aeiou', .true.)
    vf = verify(trim(s), 'abcdefghijklmnopqrstuvwxyz ')
    vb = verify(s, 'xyz ', back=.true.)
    ib = index(s, 'an', back=.true.) + 100 * index(trim(s), ' ', back=.true.)
  end subroutine measure

  real(8) function apply(method, x)
    character(len=*), intent(in) :: method
    real(8), intent(in) :: x
    select case (trim(adjustl(method)))
    case ('newton')
      apply = x - (x**3 - 2d0) / (3d0 * x**2)
    case ('secant', 'bisect')
      apply = sin(x) * x
    case default
      apply = exp(0.5d0 * x)
    end select
    if (adjustl(method) == 'newton') apply = apply + 1d0
  end function apply
end module text_tools

subroutine options(mode, x, y, k, lt, first, last, sc, sb, vf, vb, ib, name, tag, pad, words)
  use text_tools
  implicit none
  integer, intent(in) :: mode
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  integer, intent(out) :: k, lt, first, last, sc, sb, vf, vb, ib, words
  character(len=16), intent(out) :: name, tag, pad
  character(len=12) :: methods(4)
  character(len=12) :: m
  methods(1) = '  newton'
  methods(2) = 'secant   '
  methods(3) = '   bisect'
  methods(4) = ' other'
  m = methods(mode)
  y = apply(m, x)
  y = y + apply(adjustl(m), x) + apply(adjustr(m), 2d0 * x)
  name = trim(adjustl(m)) // '!' // trim(m)
  tag = adjustr(m)
  pad = repeat('ab', 3) // adjustl(m)
  k = 0
  if (trim(m) == methods(mode)) k = k + 1
  if (len(trim(m)) == len_trim(m)) k = k + 10
  if (len(adjustl(m)) == 12) k = k + 100
  if (trim(adjustl(m)) /= 'newton') k = k + 1000
  if (adjustr(m) > adjustl(m)) k = k + 10000
  if (len(repeat('-', 7)) == 7) k = k + 100000
  call measure(m, lt, first, last, sc, sb, vf, vb, ib)
  words = words_in(adjustl(m)) + 10 * words_in(repeat(' x', 3)) + 100 * words_in(adjustr(m))
  print *, 'method ', trim(m), ' [', adjustl(m), '] [', adjustr(m), ']'
  print *, repeat('=', 10), len_trim(m), trim(adjustl(m))
end subroutine options

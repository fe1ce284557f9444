! Deferred-length CHARACTER dummy arguments (`character(len=:),
! allocatable, intent(out|inout)`): a callee allocates an option key
! (INTENT(OUT), released at entry), another appends to it (INTENT(INOUT),
! reading the caller's string), a third passes it on to a `len=*` dummy;
! the key, built from a method name and a level, selects the real-valued
! model whose derivative is checked.
! adjit-test: --entry model --set method=quad --set level=2 --set x=0.5
! adjit-test: --entry model --set method=Cubic --set level=1 --set x=-0.75
! adjit-test: --entry model --set method=log --set level=3 --set x=1.5
! adjit-test: --entry model --set method=flat --set level=0 --set x=2.0
module option_keys
  implicit none
contains
  ! The key of a method: its name lower-cased, without blanks.
  subroutine make_key(method, key)
    character(len=*), intent(in) :: method
    character(len=:), allocatable, intent(out) :: key
    integer :: i, c
    allocate(character(len=len_trim(adjustl(method))) :: key)
    key = trim(adjustl(method))
    do i = 1, len(key)
      c = ichar(key(i:i))
      if (c >= 65 .and. c <= 90) key(i:i) = char(c + 32)
    end do
  end subroutine make_key

  ! Appends `-` and `word` to `key`, `count` times.
  subroutine append_word(key, word, count)
    character(len=:), allocatable, intent(inout) :: key
    character(len=*), intent(in) :: word
    integer, intent(in) :: count
    integer :: i
    if (.not. allocated(key)) key = ''
    do i = 1, count
      key = key // '-' // word
    end do
  end subroutine append_word

  ! The number of parts of a key (`-` separated).
  integer function parts(key)
    character(len=*), intent(in) :: key
    integer :: i
    parts = 1
    do i = 1, len(key)
      if (key(i:i) == '-') parts = parts + 1
    end do
  end function parts

  subroutine describe(key, n)
    character(len=:), allocatable, intent(inout) :: key
    integer, intent(out) :: n
    n = parts(key)
    call append_word(key, 'end', 1)
  end subroutine describe

  subroutine model(method, level, x, y, n)
    character(len=*), intent(in) :: method
    integer, intent(in) :: level
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: n
    character(len=:), allocatable :: key
    integer :: p
    key = 'stale key'
    call make_key(method, key)
    call append_word(key, 'lv', level)
    call describe(key, p)
    select case (key(1:index(key, '-') - 1))
    case ('quad')
      y = x * x
    case ('cubic')
      y = x ** 3 - x
    case ('log')
      y = log(1.0d0 + x * x)
    case default
      y = 2.0d0 * x
    end select
    y = y * p + len(key) * x
    n = len(key) * 100 + p
    print *, 'key=', key, ' parts=', p
  end subroutine model
end module option_keys

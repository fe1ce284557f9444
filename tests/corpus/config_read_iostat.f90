! A key=value configuration parsed from internal files with IOSTAT=: the
! slot of each value is found by a function that writes a trace record
! into an internal file of its own (`read (text, *, iostat=ios)
! w(slot_of(key))`). The IOSTAT= of the outer READ must be its own
! status, not the one of the WRITE done while its item's subscript is
! evaluated, and a value that does not read keeps the element's value;
! the subscript is evaluated once per item (the calls are counted). The
! weights read select and scale the differentiable result.
! adjit-test: --entry configure --set x=1.5 --set line=1
! adjit-test: --entry configure --set x=-0.5 --set line=2
! adjit-test: --entry configure --set x=2 --set line=3
module config_m
  implicit none
  integer :: slot_calls = 0
  character(len=24) :: trace
contains
  ! The slot of the option named `key` (0: unknown), traced.
  integer function slot_of(key)
    character(len=*), intent(in) :: key
    slot_calls = slot_calls + 1
    select case (key)
    case ('alpha')
      slot_of = 1
    case ('beta')
      slot_of = 2
    case default
      slot_of = 3
    end select
    write (trace, '(a,1x,i0,1x,i0)') key, slot_of, slot_calls
  end function

  ! Splits `entry` at its `=` into key and value text.
  subroutine split_entry(entry, key, text)
    character(len=*), intent(in) :: entry
    character(len=*), intent(out) :: key, text
    integer :: eq
    eq = index(entry, '=')
    key = entry(1:eq - 1)
    text = entry(eq + 1:)
  end subroutine

  subroutine configure(line, x, y, w, ios, statuses, calls)
    integer, intent(in) :: line
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    real(8), intent(out) :: w(3)
    integer, intent(out) :: ios, statuses(2), calls
    character(len=32) :: entries(3)
    character(len=8) :: key
    character(len=24) :: text
    entries = [character(len=32) :: 'alpha=2.5', 'beta=oops', 'gamma=0.25 1.5']
    w = [1d0, 1d0, 1d0]
    call split_entry(entries(line), key, text)
    read (text, *, iostat=ios) w(slot_of(key))
    statuses(1) = ios
    ! Two items, each with a traced subscript; the second value is
    ! missing in the first two entries (end of file).
    read (text, *, iostat=statuses(2)) w(slot_of('beta')), w(slot_of(key))
    calls = slot_calls
    y = w(1) * x**2 + w(2) * sin(x) + w(3) * x
    print '(a,a)', 'trace: ', trim(trace)
  end subroutine
end module

! ALLOCATABLE arrays of structures whose type has CHARACTER components of
! constant length, as a parts catalogue keeps named items: a `load`
! routine (an INTENT(OUT) ALLOCATABLE dummy) allocates the catalogue and
! names each item; a lookup selects on `items(i)%name` (SELECT CASE and
! comparisons), a whole-array copy keeps the names (the copy renamed
! afterwards, the original not), PRINT of names and a substring of one;
! the prices of the items picked by name carry the derivative.
! adjit-test: --entry quote --set n=4 --set x=0.5 --set pick=bolt
! adjit-test: --entry quote --set n=5 --set x=-1.25 --set pick=washer
! adjit-test: --entry quote --set n=3 --set x=2 --set pick=gear
module parts_catalogue
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: part
    character(len=16) :: name = 'unnamed'
    character(len=4) :: unit
    integer :: stock
    real(dp) :: price
  end type part
contains
  ! Fills a catalogue of `n` parts priced from `x`.
  subroutine load(items, n, x)
    type(part), allocatable, intent(out) :: items(:)
    integer, intent(in) :: n
    real(dp), intent(in) :: x
    integer :: i
    allocate(items(n))
    do i = 1, n
      select case (mod(i, 3))
      case (1)
        items(i)%name = 'bolt'
        items(i)%unit = 'each'
      case (2)
        items(i)%name = 'washer-stainless-steel'
        items(i)%unit = 'box'
      case default
        items(i)%name = 'gear'
        items(i)%unit = 'kg'
      end select
      items(i)%stock = 10 * i
      items(i)%price = (1.0_dp + i) * x + 0.5_dp * x * x
    end do
  end subroutine load

  ! The position of the first part named `what` (a prefix of 6 letters
  ! for names longer than that), 0 when there is none.
  integer function find(items, what)
    type(part), intent(in) :: items(:)
    character(len=*), intent(in) :: what
    integer :: i
    find = 0
    do i = 1, size(items)
      if (items(i)%name(1:6) == what(1:min(6, len(what)))) then
        find = i
        return
      end if
    end do
  end function find

  subroutine quote(n, x, pick, y, k)
    integer, intent(in) :: n
    real(dp), intent(in) :: x
    character(len=*), intent(in) :: pick
    real(dp), intent(out) :: y
    integer, intent(out) :: k
    type(part), allocatable :: items(:), copy(:)
    integer :: i, j
    call load(items, n, x)
    copy = items
    copy(1)%name = 'renamed'
    y = 0.0_dp
    k = 0
    do i = 1, size(items)
      select case (items(i)%name)
      case ('bolt')
        y = y + items(i)%price * 2
      case ('gear')
        y = y + sin(items(i)%price)
      case default
        y = y + items(i)%price ** 2
      end select
      if (items(i)%unit == 'kg') k = k + items(i)%stock
    end do
    j = find(items, pick)
    if (j > 0) y = y + 3 * items(j)%price
    if (copy(1)%name /= items(1)%name) k = k + 1000
    if (len_trim(items(2)%name) == 16) k = k + 10000
    print *, '[', items(1)%name, '] [', copy(1)%name, '] [', items(2)%name(1:6), '] ', size(copy)
    print *, (trim(items(i)%unit), ' ', i = 1, n)
    deallocate(items)
    if (.not. allocated(items)) k = k + 100000
  end subroutine quote
end module parts_catalogue

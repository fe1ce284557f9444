! ALLOCATABLE CHARACTER data of constant length: a component
! (`character(len=8), allocatable :: tags(:)`, beside a deferred-length
! name) and locals (`character(len=12), allocatable :: label`, an array
! `spare(:)`) of a model's settings. ALLOCATE without a type
! specification gives the declared length; assignments blank-pad or cut
! to it (a constructor of longer strings, a longer label); a structure
! assignment copies deeply (the copy's tags changed afterwards, the
! original's not); a structure constructor; ALLOCATED and DEALLOCATE. The
! tags found in the record pick the real-valued terms whose derivative is
! checked.
! adjit-test: --entry score --set first=smooth --set count=3 --set x=0.5
! adjit-test: --entry score --set first=Sharp --set count=2 --set x=-1.25
! adjit-test: --entry score --set first=linear-model --set count=4 --set x=0.75
module model_records
  implicit none
  type :: record
    character(len=:), allocatable :: name
    character(len=8), allocatable :: tags(:)
    real(8) :: weight = 1.0d0
  end type record
contains
  ! Gives `r` `count` tags, the first `first`, the others numbered.
  subroutine tag_record(r, first, count)
    type(record), intent(inout) :: r
    character(len=*), intent(in) :: first
    integer, intent(in) :: count
    integer :: i
    if (allocated(r%tags)) deallocate(r%tags)
    allocate(r%tags(count))
    r%tags(1) = first
    do i = 2, count
      r%tags(i) = 'tag'
      r%tags(i)(4:4) = char(48 + i)
    end do
  end subroutine tag_record

  ! The number of tags of `r` equal to `t`.
  integer function has_tag(r, t)
    type(record), intent(in) :: r
    character(len=*), intent(in) :: t
    integer :: i
    has_tag = 0
    if (.not. allocated(r%tags)) return
    do i = 1, size(r%tags)
      if (r%tags(i) == t) has_tag = has_tag + 1
    end do
  end function has_tag

  subroutine score(first, count, x, y, k)
    character(len=*), intent(in) :: first
    integer, intent(in) :: count
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: k
    type(record) :: a, b
    character(len=8), allocatable :: spare(:)
    character(len=12), allocatable :: label
    k = 0
    if (allocated(a%name)) k = -1
    allocate(label)
    label = 'model-' // first
    a%name = label
    call tag_record(a, first, count)
    b = a
    b%tags(1) = 'copied'
    b%name = 'b'
    spare = [character(len=3) :: 'abcdef', 'x']
    y = 0.0d0
    if (has_tag(a, 'smooth') > 0) y = y + sin(x)
    if (has_tag(a, 'sharp') + has_tag(a, 'Sharp') > 0) y = y + abs(x) * x
    if (has_tag(a, 'linear-m') > 0) y = y + 3.0d0 * x
    if (has_tag(b, 'copied') > 0) y = y + x * x * has_tag(b, 'tag2')
    y = y * a%weight + len_trim(a%name) * x + size(spare) * len(spare(1)) * x
    k = k + 1000 * len_trim(a%name) + 10 * size(b%tags) + len_trim(b%name)
    print *, '[', a%name, '] [', b%name, '] [', a%tags(1), '] [', b%tags(1), '] [', spare(1), ']'
    deallocate(a%tags)
    if (.not. allocated(a%tags)) k = k + 10000
    a = record(tags=spare, weight=2.0d0)
    y = y + a%weight * size(a%tags) * x
    if (allocated(a%name)) k = k + 100000
    print *, '[', a%tags(2), ']', len(a%tags)
  end subroutine score
end module model_records

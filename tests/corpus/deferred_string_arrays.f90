! Arrays of deferred-length CHARACTER strings (`character(len=:),
! allocatable :: names(:)`, `allocate(character(len=m) :: names(n))`): a
! module table of stage names and a local list of labels, elements and
! their substrings assigned (blank-padded to the common length) and read
! (comparisons, SELECT CASE, `//`, INDEX, LEN_TRIM, copied to a string),
! LEN and SIZE of the arrays, ALLOCATED and DEALLOCATE. The stages named
! pick the real-valued terms whose sum's derivative is checked.
! adjit-test: --entry weigh --set method=sq --set n=3 --set x=0.5
! adjit-test: --entry weigh --set method=lin --set n=5 --set x=-1.25
! adjit-test: --entry weigh --set method=exp --set n=2 --set x=0.75
module stage_table
  implicit none
  character(len=:), allocatable :: stages(:)
contains
  ! Fills the table with `n` stage names of `width` characters.
  subroutine build_stages(n, width)
    integer, intent(in) :: n, width
    integer :: i
    if (allocated(stages)) deallocate(stages)
    allocate(character(len=width) :: stages(n))
    do i = 1, n
      stages(i) = 'st'
      stages(i)(3:3) = char(48 + i)
    end do
  end subroutine build_stages

  ! The number of non-blank characters of `label` before its first `#`.
  integer function head_length(label)
    character(len=*), intent(in) :: label
    head_length = index(label, '#') - 1
    if (head_length < 0) head_length = len_trim(label)
  end function head_length

  subroutine weigh(method, n, x, y, k)
    character(len=*), intent(in) :: method
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: k
    character(len=:), allocatable :: labels(:), label
    integer :: i
    call build_stages(n, 4)
    allocate(character(len=len(method) + 3) :: labels(n))
    do i = 1, size(labels)
      labels(i) = method // '#' // char(48 + i)
    end do
    y = 0.0d0
    do i = 1, n
      label = labels(i)
      select case (labels(i)(1:head_length(label)))
      case ('sq')
        y = y + i * x * x
      case ('exp')
        y = y + exp(i * x)
      case default
        y = y + i * x
      end select
      if (stages(i) == 'st' // char(48 + i)) y = y + x
    end do
    if (labels(n)(len_trim(labels(n)):) == char(48 + n)) y = 2.0d0 * y
    k = 1000 * len(labels) + 100 * size(stages) + len_trim(stages(n)) + 10 * len(stages)
    print *, 'first=', labels(1), ' last=', trim(labels(n)) // '|', ' stage=', stages(n)
    deallocate(labels)
    if (.not. allocated(labels)) k = -k
  end subroutine weigh
end module stage_table

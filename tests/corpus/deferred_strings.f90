! Deferred-length CHARACTER variables (`character(len=:), allocatable`)
! choosing what is computed: a method name normalised into a local
! string (ALLOCATE with a type specification, assignment reallocating
! to the right-hand side's length, `s = s // 'x'` reading the target),
! upper-cased in place by a `character(len=*)` dummy, and a label built
! by concatenation and compared; SELECT CASE, INDEX, LEN, LEN_TRIM,
! substrings (read and assigned), ALLOCATED and DEALLOCATE, and a module
! string kept for PRINT.
! adjit-test: --entry blend --set method=sin --set k=1 --set x=0.75
! adjit-test: --entry blend --set method=Exp --set k=2 --set x=-0.5
! adjit-test: --entry blend --set method=Poly --set k=3 --set x=1.25
! adjit-test: --entry blend --set method=tanh --set k=0 --set x=0.5
module deferred_strings_m
  implicit none
  character(len=:), allocatable :: last_label
contains
  subroutine upcase(s)
    character(len=*), intent(inout) :: s
    integer :: i, c
    do i = 1, len(s)
      c = ichar(s(i:i))
      if (c >= 97 .and. c <= 122) s(i:i) = char(c - 32)
    end do
  end subroutine upcase

  ! The weight of a label: its length and where its marker is.
  function label_weight(label) result(w)
    character(len=*), intent(in) :: label
    real(8) :: w
    w = len(label) + 0.5d0 * index(label, '#')
  end function label_weight

  subroutine blend(method, k, x, y, n)
    character(len=*), intent(in) :: method
    integer, intent(in) :: k
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: n
    character(len=:), allocatable :: m, label
    integer :: i
    allocate(character(len=len(method)) :: m)
    m = trim(adjustl(method))
    call upcase(m)
    label = m
    do i = 1, k
      label = label // '#'
    end do
    label = label // '_v' // m(1:1)
    select case (m)
    case ('SIN')
      y = sin(x)
    case ('EXP')
      y = exp(x)
    case ('POLY')
      y = x * (1.0d0 + x * (0.5d0 + x / 6.0d0))
    case default
      y = x
    end select
    if (label(1:2) == 'EX') y = y * 2.0d0
    if (index(label, '#_') > 0) y = y + label_weight(label) * x * x
    label(1:1) = 'z'
    if (label(1:1) == 'z' .and. len(label) > 4) y = y - x
    n = len(label) + 10 * len_trim(m)
    last_label = label
    print *, 'label=', label, ' len=', len(last_label), ' m=', m
    deallocate(m)
    if (.not. allocated(m)) y = y * 1.5d0
  end subroutine blend
end module deferred_strings_m

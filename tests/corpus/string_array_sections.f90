! Arrays of strings of run-time length as assignment targets, whole and
! by sections: a solver-options module keeps its option names in an
! ALLOCATABLE CHARACTER array of constant length and its aliases in a
! deferred-length array; library routines take them as assumed-shape
! `character(len=*) :: names(:)` dummies, which they reset (`names =
! 'none'`), shift by overlapping sections (`names(2:) = names(:n-1)`),
! left-justify (`names = adjustl(names)`) and fill from other arrays of
! other lengths (`names(2:3) = raw(1:2)`, strided sections); a CHARACTER
! array of constant length is filled from an array of strings. The
! option found by name picks the formula of the differentiable result.
! adjit-test: --entry solve --set sel=1 --set x=1.25
! adjit-test: --entry solve --set sel=2 --set x=-0.5
! adjit-test: --entry solve --set sel=3 --set x=0.75
module solver_options_m
  implicit none
  character(len=8), allocatable :: option_names(:)
  character(len=:), allocatable :: aliases(:)
contains
  ! Every name blank, then `fill` in the first ones.
  subroutine reset_names(names, fill, nfill)
    character(len=*), intent(inout) :: names(:)
    character(len=*), intent(in) :: fill(:)
    integer, intent(in) :: nfill
    names = 'none'
    if (nfill > 0) names(1:nfill) = fill(1:nfill)
  end subroutine

  ! Pushes `first` in front, dropping the last name.
  subroutine push_front(names, first)
    character(len=*), intent(inout) :: names(:)
    character(len=*), intent(in) :: first
    integer :: n
    n = size(names)
    names(2:) = names(:n - 1)
    names(1) = first
  end subroutine

  ! Left-justified names, and the odd ones copied over the even ones'
  ! places from `src` (strided sections).
  subroutine tidy(names, src)
    character(len=*), intent(inout) :: names(:)
    character(len=*), intent(in) :: src(:)
    names = adjustl(names)
    names(2:size(names):2) = src(1:size(src):2)
  end subroutine

  ! The position of `key` in `names`, 0 if absent.
  integer function find_name(names, key)
    character(len=*), intent(in) :: names(:)
    character(len=*), intent(in) :: key
    integer :: i
    find_name = 0
    do i = 1, size(names)
      if (names(i) == key) then
        find_name = i
        return
      end if
    end do
  end function

  subroutine load_options(raw)
    character(len=*), intent(in) :: raw(:)
    option_names = raw
    option_names = adjustl(option_names)
    aliases = [character(len=3) :: 'nwt', 'bis', 'sec', 'fix']
    aliases(2:3) = option_names(3:4)
  end subroutine

  subroutine solve(sel, x, y, picked, table, short)
    integer, intent(in) :: sel
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    character(len=8), intent(out) :: picked
    character(len=8), intent(out) :: table(5)
    character(len=5), intent(out) :: short(4)
    character(len=6) :: raw(5), first(4), rest(4)
    character(len=3) :: shown(4)
    integer :: i, k
    raw = ['  newt', 'bisect', ' secnt', 'fixpt ', 'brent ']
    first = raw(1:4)
    rest = raw(2:5)
    call load_options(first)
    call push_front(option_names, 'default')
    call tidy(option_names, rest)
    table = 'unused'
    table(1:4) = option_names
    short = aliases
    call reset_names(aliases, ['nwt', 'bis'], 1)
    select case (sel)
    case (1)
      picked = 'default'
    case (2)
      picked = option_names(3)
    case default
      picked = 'secnt'
    end select
    k = find_name(option_names, picked)
    y = x
    select case (k)
    case (1)
      y = x * x + 1d0
    case (2, 3)
      y = sin(x) * real(k, 8)
    case default
      y = exp(x) - real(k, 8)
    end select
    if (aliases(2) == 'non') y = y + x
    shown = aliases
    print '(a,4(1x,a),a,4(1x,a),2(1x,i0))', 'options:', &
         (trim(table(i)), i = 1, 4), ' |', shown, len(aliases), k
  end subroutine
end module

! Whole CHARACTER arrays of constant length: a module keeps a table of
! method names (filled from a PARAMETER table, an untyped and a typed
! array constructor, section copies between arrays of other lengths,
! overlapping sections and a scalar broadcast), a key chosen by number
! is looked up in it (comparisons in COUNT and ANY) and selects the
! formula that computes the real results; ADJUSTL over the array and a
! `character(len=*) :: names(n)` dummy filled whole and by sections.
! adjit-test: --entry run_method --set sel=1 --set x=1.5
! adjit-test: --entry run_method --set sel=2 --set x=-0.75
! adjit-test: --entry run_method --set sel=3 --set x=0.5
! adjit-test: --entry run_method --set sel=4 --set x=2.25
module method_table_m
  implicit none
  integer, parameter :: nmeth = 4
  character(len=8), parameter :: builtin(nmeth) = &
       ['linear  ', 'square  ', 'sine    ', 'expdecay']
  character(len=8) :: methods(nmeth)
  character(len=6) :: short(nmeth)
contains
  ! The table: the built-in names, then the last two renamed.
  subroutine load_table(custom)
    logical, intent(in) :: custom
    methods = builtin
    if (custom) then
      methods(3:4) = ['  sinus ', ' expo   ']
      methods(3:4) = adjustl(methods(3:4))
    end if
    short = methods
  end subroutine

  ! Fills `names` with a default, then its tail from the table.
  subroutine default_names(names, n, fill)
    integer, intent(in) :: n
    character(len=*), intent(inout) :: names(n)
    character(len=*), intent(in) :: fill
    names = fill
    names(2:n) = short(1:n - 1)
  end subroutine

  ! The position of `key` in the table (0: unknown).
  integer function lookup(key)
    character(len=*), intent(in) :: key
    integer :: i
    lookup = 0
    if (.not. any(methods == key)) return
    do i = 1, nmeth
      if (methods(i) == key) then
        lookup = i
        return
      end if
    end do
  end function

  real(8) function apply(key, x)
    character(len=*), intent(in) :: key
    real(8), intent(in) :: x
    select case (lookup(key))
    case (1)
      apply = 3.0d0 * x + 1.0d0
    case (2)
      apply = x * x - 0.5d0 * x
    case (3)
      apply = sin(2.0d0 * x) + x
    case (4)
      apply = exp(-x) * x
    case default
      apply = -x
    end select
  end function
end module

subroutine run_method(sel, x, y, z, nlong, hits, picked, names, rotated)
  use method_table_m
  implicit none
  integer, intent(in) :: sel
  real(8), intent(in) :: x
  real(8), intent(out) :: y, z
  integer, intent(out) :: nlong, hits
  character(len=8), intent(out) :: picked
  character(len=6), intent(out) :: names(3)
  character(len=8), intent(out) :: rotated(nmeth)
  character(len=8) :: keys(nmeth), other
  call load_table(sel > 2)
  keys = ''
  keys(1:2) = [character(len=8) :: 'square', 'sinus-wave']
  keys(3:4) = methods(3:4)
  picked = keys(sel)
  y = apply(picked, x)
  other = keys(mod(sel, nmeth) + 1)
  z = apply(other, 2.0d0 * x) * y
  ! Names longer than six characters, and keys found in the table.
  nlong = count(methods /= short)
  hits = count(keys == methods)
  call default_names(names, 3, 'none')
  ! A rotation through overlapping sections.
  rotated = methods
  rotated(2:nmeth) = rotated(1:nmeth - 1)
  rotated(1) = methods(nmeth)
  print '(a, 4(1x, a))', 'table:', methods
  print '(a, 3(1x, a))', 'names:', names
end subroutine

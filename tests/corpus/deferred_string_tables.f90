! Arrays of deferred-length CHARACTER strings as tables of names: a
! module table of named parameters (`param_names`, filled by a
! `[character(len=5) :: ...]` constructor that reallocates it, copied to
! a local array and back, two names swapped meanwhile) looked up by name,
! and a local list of method keys (`allocate(character(len=8) ::
! keys(n))`) from which a solver picks its update by SELECT CASE on an
! element. Elements are passed to
! `character(len=*)` dummies (read and written in place), compared,
! trimmed, and measured with LEN, SIZE, LEN_TRIM; ALLOCATED and DEALLOCATE.
! The real-valued result depends on the names found, so the derivative
! checks run through the lookups.
! adjit-test: --entry relax --set which=1 --set x=0.5
! adjit-test: --entry relax --set which=2 --set x=1.25
! adjit-test: --entry relax --set which=3 --set x=0.3
! adjit-test: --entry score --set method=gain --set x=0.5
! adjit-test: --entry score --set method=other --set x=2.0
module param_table
  implicit none
  character(len=:), allocatable :: param_names(:)
  real(8) :: param_values(4)
contains
  ! Defines the named parameters, scaled by `s`.
  subroutine define_params(s)
    real(8), intent(in) :: s
    if (allocated(param_names)) deallocate(param_names)
    param_names = [character(len=5) :: 'rate', 'decay', 'gain', 'shift']
    param_values = [0.5d0 * s, 0.25d0, 1.5d0 + s, -0.125d0]
  end subroutine define_params

  ! The position of `key` in the table (0 when absent).
  integer function find_param(key)
    character(len=*), intent(in) :: key
    integer :: i
    find_param = 0
    do i = 1, size(param_names)
      if (trim(param_names(i)) == key) then
        find_param = i
        return
      end if
    end do
  end function find_param

  ! The value of the parameter `key`, `fallback` when it is not defined.
  real(8) function param(key, fallback)
    character(len=*), intent(in) :: key
    real(8), intent(in) :: fallback
    integer :: i
    i = find_param(key)
    if (i > 0) then
      param = param_values(i)
    else
      param = fallback
    end if
  end function param

  ! Upper-cases the first letter of `word` in place.
  subroutine capitalise(word)
    character(len=*), intent(inout) :: word
    integer :: c
    c = ichar(word(1:1))
    if (c >= ichar('a') .and. c <= ichar('z')) word(1:1) = char(c - 32)
  end subroutine capitalise

  ! The number of characters of `word` before trailing blanks.
  integer function used_length(word)
    character(len=*), intent(in) :: word
    used_length = len_trim(word)
  end function used_length

  ! y = (the parameter named `method`, 1 when it is not defined) * x,
  ! the table defined at x: rate 0.5 x, decay 0.25, gain 1.5 + x.
  subroutine score(method, x, y)
    character(len=*), intent(in) :: method
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    call define_params(x)
    y = param(method, 1.0d0) * x
  end subroutine score

  ! `steps` relaxation steps on y from `x`, by the method the key
  ! `keys(which)` names; `code` encodes the table's shape and lookups.
  subroutine relax(which, x, y, code)
    integer, intent(in) :: which
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: code
    character(len=:), allocatable :: keys(:), picked, saved(:)
    integer :: i, steps
    call define_params(x)
    saved = param_names
    param_names(2) = 'gain'
    param_names(3) = 'decay'
    allocate(character(len=8) :: keys(3))
    keys(1) = 'jacobi'
    keys(2) = 'newton'
    keys(3) = 'damped-newton'
    picked = trim(keys(which))
    steps = 2 + used_length(keys(which))
    y = x
    do i = 1, steps
      select case (keys(which))
      case ('jacobi')
        y = y - param('rate', 0.1d0) * (y * y - param('gain', 1.0d0))
      case ('newton')
        y = y - (y * y - param('gain', 1.0d0)) / (2.0d0 * y + 4.0d0)
      case default
        y = y - param('decay', 0.5d0) * (y * y - param('gain', 1.0d0)) / (2.0d0 * y + 4.0d0)
      end select
    end do
    y = y + param('shift', 0.0d0) + param('missing', 0.0d0) * x
    param_names = saved
    y = y + param('gain', 0.0d0) * param('decay', 1.0d0)
    call capitalise(keys(which))
    if (keys(which)(1:1) == 'J' .or. keys(which)(1:1) == 'N' .or. keys(which)(1:1) == 'D') then
      y = y * 2.0d0
    end if
    code = 1000 * len(keys) + 100 * size(saved) + 10 * len(picked) + find_param('gain')
    print *, 'key=', keys(which), ' picked=', picked, '|', trim(keys(3)), '|', len(param_names)
    deallocate(keys)
    if (allocated(keys)) code = -code
  end subroutine relax
end module param_table

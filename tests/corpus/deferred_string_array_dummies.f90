! Arrays of deferred-length strings as dummy arguments: a registry of
! method names built by a callee (`character(len=:), allocatable,
! intent(out) :: names(:)`, released at entry), grown by another
! (INTENT(INOUT), reallocated wider), measured by a third (INTENT(IN)),
! a `[character(len=n) :: ...]` constructor with an implied DO building
! the list; the names searched and upper-cased in place through `character(len=*) ::
! table(:)` dummies, given the array whole, a CHARACTER array of constant
! length or an array constructor. The method found by name picks the
! real-valued model whose derivative is checked.
! adjit-test: --entry fit --set method=quad --set n=3 --set x=0.5
! adjit-test: --entry fit --set method=cubic --set n=5 --set x=-0.75
! adjit-test: --entry fit --set method=sqrt --set n=2 --set x=1.5
! adjit-test: --entry fit --set method=sin --set n=4 --set x=0.25
! adjit-test: --entry fit --set method=none --set n=1 --set x=2.0
module method_registry
  implicit none
contains
  ! The first `n` method names (all five when `n` is larger).
  subroutine list_methods(n, names)
    integer, intent(in) :: n
    character(len=:), allocatable, intent(out) :: names(:)
    character(len=:), allocatable :: all(:)
    integer :: i, m
    all = [character(len=6) :: 'lin', 'quad', 'cubic', 'exp', 'log']
    m = max(1, min(n, size(all)))
    names = [character(len=6) :: (all(i), i = 1, m)]
  end subroutine list_methods

  ! Appends `name` to `names`, widening them when it is longer.
  subroutine add_method(names, name)
    character(len=:), allocatable, intent(inout) :: names(:)
    character(len=*), intent(in) :: name
    character(len=:), allocatable :: old(:)
    integer :: i, n, w
    old = names
    n = size(old)
    w = max(len(old), len(name))
    deallocate(names)
    allocate(character(len=w) :: names(n + 1))
    do i = 1, n
      names(i) = old(i)
    end do
    names(n + 1) = name
  end subroutine add_method

  ! The position of `key` in `table`, 0 when absent.
  integer function lookup(table, key)
    character(len=*), intent(in) :: table(:)
    character(len=*), intent(in) :: key
    integer :: i
    lookup = 0
    do i = 1, size(table)
      if (table(i) == key) then
        lookup = i
        return
      end if
    end do
  end function lookup

  ! The length of the longest name without its trailing blanks.
  integer function widest(names)
    character(len=:), allocatable, intent(in) :: names(:)
    integer :: i
    widest = 0
    do i = 1, size(names)
      widest = max(widest, len_trim(names(i)))
    end do
  end function widest

  ! Upper-cases every string of `a` in place.
  subroutine upcase_all(a)
    character(len=*), intent(inout) :: a(:)
    integer :: i, j, c
    do i = 1, size(a)
      do j = 1, len(a)
        c = ichar(a(i)(j:j))
        if (c >= 97 .and. c <= 122) a(i)(j:j) = char(c - 32)
      end do
    end do
  end subroutine upcase_all

  subroutine fit(method, n, x, y, k)
    character(len=*), intent(in) :: method
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8), intent(out) :: y
    integer, intent(out) :: k
    character(len=:), allocatable :: names(:)
    character(len=8) :: extra(2)
    character(len=:), allocatable :: chosen
    integer :: at
    names = [character(len=2) :: 'zz']
    call list_methods(n, names)
    call add_method(names, 'sqrt')
    extra(1) = 'tanh'
    extra(2) = 'sin'
    at = lookup(names, method)
    chosen = 'none'
    if (at > 0) chosen = names(at)
    if (lookup(extra, method) > 0) chosen = extra(lookup(extra, method))
    select case (chosen)
    case ('lin')
      y = 2.0d0 * x
    case ('quad')
      y = x * x
    case ('cubic')
      y = x ** 3 - x
    case ('sqrt')
      y = sqrt(1.0d0 + x * x)
    case ('tanh')
      y = tanh(x)
    case ('sin')
      y = sin(2.0d0 * x)
    case default
      y = exp(0.5d0 * x)
    end select
    k = 100 * at + widest(names) + 1000 * len(names)
    call upcase_all(names)
    y = y + lookup(names, 'QUAD') * x + lookup(['lin ', 'quad'], method) * x * x
    print *, size(names), ' chosen=', chosen, ' first=', names(1), ' last=', names(size(names)), ' k=', k
  end subroutine fit
end module method_registry

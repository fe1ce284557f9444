! Runtime support of adjit's emitted derivatives: the value, integer and
! control stacks of the adjoint (growable, no fixed limit) and the float
! rounding functions with IEEE signed-zero results.
!@keep
! The kept records: what a procedure called from outside keeps between
! calls (the allocation of its ALLOCATABLE module and SAVE arrays).
!@end-keep
module adjit_support
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, &
    ieee_positive_inf, ieee_negative_inf
  implicit none
  private
  public :: ieee_value, ieee_quiet_nan, ieee_positive_inf, ieee_negative_inf
  public :: adjit_push_value, adjit_pop_value, adjit_push_int, adjit_pop_int
  public :: adjit_push_control, adjit_pop_control, adjit_floor, adjit_ceil
  public :: adjit_polygamma, adjit_add_elements_4, adjit_add_elements_8
!@keep
  public :: adjit_keep_begin, adjit_keep_put, adjit_keep_end
  public :: adjit_restore_begin, adjit_restore_end
  public :: adjit_kept_get_i8, adjit_kept_get_r8, adjit_kept_get_l
!@end-keep

  !> One growable stack of 64-bit words.
  type :: word_stack
    real(8), allocatable :: reals(:)
    integer(8), allocatable :: ints(:)
    integer(8) :: depth = 0
  end type word_stack

  type(word_stack), save :: values, integers, controls

!@keep
  !> One kept record: its name and its values (64-bit words).
  type :: kept_record
    character(len=:), allocatable :: name
    integer(8), allocatable :: words(:)
  end type kept_record

  !> The kept records, the record being written or read, and the
  !> position of the next value read.
  type(kept_record), allocatable, save :: kept(:)
  type(word_stack), save :: keeping
  character(len=:), allocatable, save :: keeping_name
  integer(8), allocatable, save :: restoring(:)
  integer(8), save :: restored = 0

  !> Adds a value to the record being written.
  interface adjit_keep_put
    module procedure keep_put_i4, keep_put_i8, keep_put_r4, keep_put_r8, keep_put_l
  end interface adjit_keep_put
!@end-keep

  !> Float FLOOR / CEILING with the result in the argument's kind.
  interface adjit_floor
    module procedure floor_4, floor_8
  end interface adjit_floor
  interface adjit_ceil
    module procedure ceil_4, ceil_8
  end interface adjit_ceil

  !> The polygamma function of order n (0: digamma), as adjit computes it.
  interface adjit_polygamma
    module procedure polygamma_4, polygamma_8
  end interface adjit_polygamma

contains

  !> psi^(n)(x) in single precision (computed in double).
  elemental real(4) function polygamma_4(n, x)
    integer, intent(in) :: n
    real(4), intent(in) :: x
    polygamma_4 = real(polygamma_8(n, real(x, 8)), 4)
  end function polygamma_4

  !> psi^(n)(x): recurrence up to x >= 10 + n, then the asymptotic series;
  !> reflection for negative x when n <= 1; NaN at the poles.
  elemental recursive real(8) function polygamma_8(n, x) result(r)
    integer, intent(in) :: n
    real(8), intent(in) :: x
    real(8), parameter :: pi = 3.141592653589793d0
    real(8), parameter :: b(10) = [1d0/6d0, -1d0/30d0, 1d0/42d0, -1d0/30d0, &
      5d0/66d0, -691d0/2730d0, 7d0/6d0, -3617d0/510d0, 43867d0/798d0, &
      -174611d0/330d0]
    real(8) :: y, acc, fact, sgn, inv, inv2, p, ratio, sm, two_k, s
    integer :: k
    if (x /= x .or. (x <= 0d0 .and. x == aint(x))) then
      r = ieee_value(r, ieee_quiet_nan)
      return
    end if
    if (x < 0d0 .and. n <= 1) then
      s = sin(pi * x)
      if (n == 0) then
        r = polygamma_8(0, 1d0 - x) - pi * cos(pi * x) / s
      else
        r = pi * pi / (s * s) - polygamma_8(1, 1d0 - x)
      end if
      return
    end if
    fact = 1d0
    do k = 1, n
      fact = fact * k
    end do
    sgn = merge(-1d0, 1d0, mod(n, 2) == 0)
    y = x
    acc = 0d0
    do while (y < 10d0 + n)
      acc = acc + sgn * fact / y**(n + 1)
      y = y + 1d0
    end do
    inv = 1d0 / y
    inv2 = inv * inv
    if (n == 0) then
      sm = 0d0
      p = inv2
      do k = 1, 10
        sm = sm + b(k) / (2d0 * k) * p
        p = p * inv2
      end do
      r = acc + log(y) - 0.5d0 * inv - sm
      return
    end if
    p = 1d0 / y**n
    sm = fact / n * p + fact * 0.5d0 * inv * p
    ratio = fact / n
    do k = 1, 10
      two_k = 2d0 * k
      ratio = ratio * (two_k + n - 2d0) * (two_k + n - 1d0) / ((two_k - 1d0) * two_k)
      p = p * inv2
      sm = sm + b(k) * ratio * p
    end do
    r = acc + sgn * sm
  end function polygamma_8

  !> Pushes a float (a REAL(4) comes back exact).
  subroutine adjit_push_value(x)
    real(8), intent(in) :: x
    real(8), allocatable :: grown(:)
    if (.not. allocated(values%reals)) allocate(values%reals(1024))
    if (values%depth == size(values%reals, kind=8)) then
      allocate(grown(2 * size(values%reals, kind=8)))
      grown(1:values%depth) = values%reals(1:values%depth)
      call move_alloc(grown, values%reals)
    end if
    values%depth = values%depth + 1
    values%reals(values%depth) = x
  end subroutine adjit_push_value

  !> Pops the last float pushed.
  real(8) function adjit_pop_value() result(x)
    if (values%depth <= 0) error stop 'adjit: value stack popped while empty'
    x = values%reals(values%depth)
    values%depth = values%depth - 1
  end function adjit_pop_value

  subroutine push_word(s, w)
    type(word_stack), intent(inout) :: s
    integer(8), intent(in) :: w
    integer(8), allocatable :: grown(:)
    if (.not. allocated(s%ints)) allocate(s%ints(1024))
    if (s%depth == size(s%ints, kind=8)) then
      allocate(grown(2 * size(s%ints, kind=8)))
      grown(1:s%depth) = s%ints(1:s%depth)
      call move_alloc(grown, s%ints)
    end if
    s%depth = s%depth + 1
    s%ints(s%depth) = w
  end subroutine push_word

  integer(8) function pop_word(s) result(w)
    type(word_stack), intent(inout) :: s
    if (s%depth <= 0) error stop 'adjit: stack popped while empty'
    w = s%ints(s%depth)
    s%depth = s%depth - 1
  end function pop_word

  !> Pushes an integer (or a logical as 0 / 1) on the integer stack.
  subroutine adjit_push_int(w)
    integer(8), intent(in) :: w
    call push_word(integers, w)
  end subroutine adjit_push_int

  !> Pops the integer stack.
  integer(8) function adjit_pop_int() result(w)
    w = pop_word(integers)
  end function adjit_pop_int

  !> Pushes a control-flow record (branch id, trip count).
  subroutine adjit_push_control(w)
    integer(8), intent(in) :: w
    call push_word(controls, w)
  end subroutine adjit_push_control

  !> Pops the control stack.
  integer(8) function adjit_pop_control() result(w)
    w = pop_word(controls)
  end function adjit_pop_control

  elemental real(4) function floor_4(x) result(r)
    real(4), intent(in) :: x
    r = x
    if (abs(x) < 2.0**23) r = sign(real(floor(x), 4), x)
  end function floor_4

  elemental real(8) function floor_8(x) result(r)
    real(8), intent(in) :: x
    r = x
    if (abs(x) < 2d0**52) r = sign(real(floor(x, 8), 8), x)
  end function floor_8

  elemental real(4) function ceil_4(x) result(r)
    real(4), intent(in) :: x
    r = x
    if (abs(x) < 2.0**23) r = sign(real(ceiling(x), 4), x)
  end function ceil_4

  elemental real(8) function ceil_8(x) result(r)
    real(8), intent(in) :: x
    r = x
    if (abs(x) < 2d0**52) r = sign(real(ceiling(x, 8), 8), x)
  end function ceil_8

  !> Adds the n elements of x to the n elements starting at y (an array
  !> element passed by sequence association).
  subroutine adjit_add_elements_4(y, x, n)
    integer(8), intent(in) :: n
    real(4), intent(inout) :: y(n)
    real(4), intent(in) :: x(n)
    y = y + x
  end subroutine adjit_add_elements_4

  !> Adds the n elements of x to the n elements starting at y (an array
  !> element passed by sequence association).
  subroutine adjit_add_elements_8(y, x, n)
    integer(8), intent(in) :: n
    real(8), intent(inout) :: y(n)
    real(8), intent(in) :: x(n)
    y = y + x
  end subroutine adjit_add_elements_8
!@keep
  !> Starts writing the kept record `name`.
  subroutine adjit_keep_begin(name)
    character(len=*), intent(in) :: name
    keeping_name = name
    keeping%depth = 0
  end subroutine adjit_keep_begin

  subroutine keep_put_i4(x)
    integer(4), intent(in) :: x
    call push_word(keeping, int(x, 8))
  end subroutine keep_put_i4

  subroutine keep_put_i8(x)
    integer(8), intent(in) :: x
    call push_word(keeping, x)
  end subroutine keep_put_i8

  subroutine keep_put_r4(x)
    real(4), intent(in) :: x
    call push_word(keeping, transfer(real(x, 8), 0_8))
  end subroutine keep_put_r4

  subroutine keep_put_r8(x)
    real(8), intent(in) :: x
    call push_word(keeping, transfer(x, 0_8))
  end subroutine keep_put_r8

  subroutine keep_put_l(x)
    logical, intent(in) :: x
    call push_word(keeping, merge(1_8, 0_8, x))
  end subroutine keep_put_l

  !> The index of the kept record `name` in `kept` (0: none).
  integer function kept_index(name) result(k)
    character(len=*), intent(in) :: name
    if (allocated(kept)) then
      do k = 1, size(kept)
        if (kept(k)%name == name) return
      end do
    end if
    k = 0
  end function kept_index

  !> Replaces the kept record by the values written since
  !> adjit_keep_begin.
  subroutine adjit_keep_end()
    type(kept_record), allocatable :: grown(:)
    integer :: k
    k = kept_index(keeping_name)
    if (k == 0) then
      if (.not. allocated(kept)) allocate(kept(0))
      allocate(grown(size(kept) + 1))
      grown(1:size(kept)) = kept
      call move_alloc(grown, kept)
      k = size(kept)
      kept(k)%name = keeping_name
    end if
    if (keeping%depth > 0) then
      kept(k)%words = keeping%ints(1:keeping%depth)
    else
      kept(k)%words = [integer(8) ::]
    end if
  end subroutine adjit_keep_end

  !> Starts reading the kept record `name` (never kept: one .false.).
  subroutine adjit_restore_begin(name)
    character(len=*), intent(in) :: name
    integer :: k
    k = kept_index(name)
    if (k == 0) then
      restoring = [0_8]
    else
      restoring = kept(k)%words
    end if
    restored = 0
  end subroutine adjit_restore_begin

  subroutine adjit_restore_end()
    restored = 0
  end subroutine adjit_restore_end

  !> The next value of the record being read, as written.
  integer(8) function adjit_kept_get_i8() result(w)
    if (restored >= size(restoring, kind=8)) error stop 'adjit: a kept record ends early'
    restored = restored + 1
    w = restoring(restored)
  end function adjit_kept_get_i8

  real(8) function adjit_kept_get_r8() result(x)
    x = transfer(adjit_kept_get_i8(), 0.0_8)
  end function adjit_kept_get_r8

  logical function adjit_kept_get_l() result(b)
    b = adjit_kept_get_i8() /= 0
  end function adjit_kept_get_l
!@end-keep
end module adjit_support

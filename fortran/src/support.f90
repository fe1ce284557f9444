! Runtime support of adjit's emitted derivatives: the value, integer and
! control stacks of the adjoint (growable, no fixed limit), and the float
! rounding functions with IEEE signed-zero results.
module adjit_support
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, &
    ieee_positive_inf, ieee_negative_inf
  implicit none
  private
  public :: ieee_value, ieee_quiet_nan, ieee_positive_inf, ieee_negative_inf
  public :: adjit_push_value, adjit_pop_value, adjit_push_int, adjit_pop_int
  public :: adjit_push_control, adjit_pop_control, adjit_floor, adjit_ceil

  !> One growable stack of 64-bit words.
  type :: word_stack
    real(8), allocatable :: reals(:)
    integer(8), allocatable :: ints(:)
    integer(8) :: depth = 0
  end type word_stack

  type(word_stack), save :: values, integers, controls

  !> Float FLOOR / CEILING with the result in the argument's kind.
  interface adjit_floor
    module procedure floor_4, floor_8
  end interface adjit_floor
  interface adjit_ceil
    module procedure ceil_4, ceil_8
  end interface adjit_ceil

contains

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
end module adjit_support

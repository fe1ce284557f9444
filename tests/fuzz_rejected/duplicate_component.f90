! A derived type declaring a component twice: the structure had one leaf
! more than its dummies, so calls passing it had the wrong number of
! arguments and the IR verifier refused them (an internal error).
! expect: component `flipped` of type `frame` is declared twice
module shapes
  implicit none
  type :: frame
    double precision :: scale = 1d0
    logical :: flipped = .false.
    logical :: flipped = .false.
  end type frame
contains
  subroutine apply(f, x)
    type(frame), intent(in) :: f
    double precision, intent(inout) :: x
    x = f%scale * x
  end subroutine apply
end module shapes

subroutine transform(x)
  use shapes
  double precision, intent(inout) :: x
  type(frame) :: f
  call apply(f, x)
end subroutine transform

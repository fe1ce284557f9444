! Local names shadow intrinsics of the same name: an ALLOCATABLE array of
! structures named `all` assigned an array constructor of structures, an
! array of structures named `sum` (`sum(1)%x(3)` is its element, while the
! module procedure's `sum(ps(k)%x)` is the intrinsic) and a scalar named
! `any`.
! adjit-test: --entry run --set x=0.5,1.5,-1
! adjit-test: --entry run --set x=-0.25,2,0.75
module pts
  implicit none
  type :: pt
    double precision :: x(3)
    double precision :: m
  end type
contains
  double precision function weigh(ps)
    type(pt), intent(in) :: ps(:)
    integer :: k
    weigh = 0
    do k = 1, size(ps)
      weigh = weigh + k * ps(k)%m * sum(ps(k)%x)
    end do
  end function
end module

subroutine run(x, y)
  use pts
  implicit none
  double precision, intent(in) :: x(3)
  double precision, intent(out) :: y(3)
  type(pt) :: p, q
  type(pt), allocatable :: all(:)
  type(pt) :: sum(2)
  double precision :: any
  p = pt(x, x(1))
  q = pt(2 * x, x(2))
  all = [p, q, p]
  y(1) = weigh(all)
  sum = [q, p]
  y(2) = weigh(sum)
  any = all(2)%m + sum(1)%x(3)
  y(3) = any
end subroutine

! ALLOCATABLE dummies reallocated without an ALLOCATE of their own: by
! assigning an array-valued function whole (`v = ramp(n, p)`, with lower
! bounds 1, growing or shrinking an allocated actual), or by passing the
! dummy on through a generic interface or through a `procedure(maker)`
! dummy to a procedure that allocates it; and an ALLOCATABLE local
! assigned an array-valued function.
! adjit-test: --entry alloc_passed_on --set n=3 --set p=0.5
! adjit-test: --entry alloc_passed_on --set n=6 --set p=-1.25
module apo_lib
  implicit none
  integer, parameter :: wp = kind(1.0d0)
  interface fill
    module procedure fill_squares
  end interface fill
  abstract interface
    subroutine maker(v, n, p)
      import :: wp
      real(wp), allocatable, intent(inout) :: v(:)
      integer, intent(in) :: n
      real(wp), intent(in) :: p
    end subroutine maker
  end interface
contains
  function ramp(n, p) result(r)
    integer, intent(in) :: n
    real(wp), intent(in) :: p
    real(wp) :: r(n)
    integer :: i
    do i = 1, n
      r(i) = sin(p * i) + p * i
    end do
  end function ramp

  subroutine by_function(v, n, p)
    real(wp), allocatable, intent(inout) :: v(:)
    integer, intent(in) :: n
    real(wp), intent(in) :: p
    v = ramp(n, p)
  end subroutine by_function

  subroutine fill_squares(v, n, p)
    real(wp), allocatable, intent(inout) :: v(:)
    integer, intent(in) :: n
    real(wp), intent(in) :: p
    integer :: i
    if (allocated(v)) deallocate(v)
    allocate(v(0:n - 1))
    do i = 0, n - 1
      v(i) = (p + i)**2
    end do
  end subroutine fill_squares

  subroutine via_generic(v, n, p)
    real(wp), allocatable, intent(inout) :: v(:)
    integer, intent(in) :: n
    real(wp), intent(in) :: p
    call fill(v, n, p)
  end subroutine via_generic

  subroutine via_dummy(make, v, n, p)
    procedure(maker) :: make
    real(wp), allocatable, intent(inout) :: v(:)
    integer, intent(in) :: n
    real(wp), intent(in) :: p
    call make(v, n, p)
  end subroutine via_dummy
end module apo_lib

subroutine alloc_passed_on(n, p, s1, s2, s3, s4, lo2, len1)
  use apo_lib
  implicit none
  integer, intent(in) :: n
  real(wp), intent(in) :: p
  real(wp), intent(out) :: s1, s2, s3, s4
  integer, intent(out) :: lo2, len1
  real(wp), allocatable :: a(:), b(:), c(:), d(:)
  allocate(a(-2:7))
  a = 0
  call by_function(a, n, p)
  len1 = size(a) * 10 + lbound(a, 1)
  s1 = sum(a * a)
  call via_generic(b, n + 1, p)
  lo2 = lbound(b, 1)
  s2 = sum(b) * size(b)
  call via_dummy(fill_squares, c, n + 2, p)
  call via_dummy(by_function, c, n - 1, 2 * p)
  s3 = sum(c) + size(c)
  d = ramp(n + 3, p)
  s4 = dot_product(d, d)
end subroutine alloc_passed_on

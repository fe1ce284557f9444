! ALLOCATABLE dummy arguments that the callee allocates: the work array
! allocated by a helper routine (INTENT(OUT), deallocated at entry when
! the caller passes it allocated), a dummy deallocated and allocated again
! with other bounds, reallocation on whole-array assignment and
! MOVE_ALLOC in the callee, a dummy passed on to a helper that allocates
! it; the caller sees the callee's allocation, bounds and values after the
! call.
! adjit-test: --entry alloc_callee --set n=4 --set x=1.5
! adjit-test: --entry alloc_callee --set n=7 --set x=-0.75
module alloc_callee_m
  implicit none
contains
  subroutine make_work(w, n, x)
    double precision, allocatable, intent(out) :: w(:)
    integer, intent(in) :: n
    double precision, intent(in) :: x
    integer :: i
    allocate(w(0:n - 1))
    do i = 0, n - 1
      w(i) = sin(x * (i + 1)) + x * x
    end do
  end subroutine make_work

  subroutine prepare(w, n, x)
    double precision, allocatable, intent(inout) :: w(:)
    integer, intent(in) :: n
    double precision, intent(in) :: x
    call make_work(w, n, x)
    w = w * x
  end subroutine prepare

  subroutine grow(w, x, info)
    double precision, allocatable, intent(inout) :: w(:)
    double precision, intent(in) :: x
    integer, intent(inout) :: info
    double precision, allocatable :: t(:)
    integer :: n
    n = size(w)
    allocate(t(2 * n))
    t(1:n) = w
    t(n + 1:) = w * x
    deallocate(w)
    call move_alloc(t, w)
    info = info * 10 + merge(1, 0, allocated(t))
  end subroutine grow

  subroutine reshape_work(m, x)
    double precision, allocatable, intent(inout) :: m(:, :)
    double precision, intent(in) :: x
    integer :: i, j
    if (allocated(m)) deallocate(m)
    allocate(m(-1:1, 2:3))
    do j = 2, 3
      do i = -1, 1
        m(i, j) = exp(x * i) + j
      end do
    end do
  end subroutine reshape_work

  subroutine squares(v, w)
    double precision, allocatable, intent(out) :: v(:)
    double precision, allocatable, intent(inout) :: w(:)
    v = w * w
    w = [w, v(1)]
  end subroutine squares
end module alloc_callee_m

subroutine alloc_callee(n, x, s, y, info)
  use alloc_callee_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: s, y(4)
  integer, intent(out) :: info(6)
  double precision, allocatable :: w(:), v(:), m(:, :)
  info = 0
  info(1) = merge(1, 0, allocated(w))
  call make_work(w, n, x)
  info(2) = lbound(w, 1) * 100 + ubound(w, 1)
  call prepare(w, n + 1, 2 * x)
  info(3) = lbound(w, 1) * 100 + ubound(w, 1)
  call grow(w, x, info(4))
  info(5) = size(w)
  allocate(m(5, 5))
  call reshape_work(m, x)
  call squares(v, w)
  info(6) = size(v) * 100 + size(w)
  s = sum(w) + sum(m) + sum(v)
  y(1) = w(1)
  y(2) = w(size(w))
  y(3) = m(1, 3) * v(2)
  y(4) = sum(m(:, 2))
end subroutine alloc_callee

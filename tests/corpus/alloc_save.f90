! SAVE allocatable locals: a history grown by one element on every call
! (allocated by the first, released by the last), and a work array of a
! module procedure whose module has SAVE in its specification part, kept
! across calls and reallocated when a call needs more room. The entry is
! called through the API, where each call starts with them unallocated:
! every array is allocated and released within the call (returning one
! allocated would be a runtime error).
! adjit-test: --entry alloc_save --set x=0.5
! adjit-test: --entry alloc_save --set x=-1.25
module alloc_save_m
  implicit none
  save
contains
  subroutine record(x, step, total, length)
    double precision, intent(in) :: x
    integer, intent(in) :: step
    double precision, intent(out) :: total
    integer, intent(out) :: length
    double precision, allocatable, save :: hist(:)
    if (step == 1) allocate(hist(0))
    hist = [hist, x * (size(hist) + 1)]
    total = sum(hist ** 2)
    length = size(hist)
    if (step == 3) deallocate(hist)
  end subroutine record

  double precision function smooth(x, m, step)
    double precision, intent(in) :: x
    integer, intent(in) :: m, step
    double precision, allocatable :: buf(:)
    save buf
    integer :: i
    if (step == 1) then
      allocate(buf(m))
      buf = 0
    else if (size(buf) < m) then
      deallocate(buf)
      allocate(buf(m))
      buf = 0
    end if
    do i = 1, m
      buf(i) = 0.5d0 * buf(i) + x * i
    end do
    smooth = sum(buf(1:m)) / m
    if (step == 3) deallocate(buf)
  end function smooth
end module alloc_save_m

subroutine alloc_save(x, y, info)
  use alloc_save_m
  implicit none
  double precision, intent(in) :: x
  double precision, intent(out) :: y(6)
  integer, intent(out) :: info(3)
  integer :: k
  do k = 1, 3
    call record(x + k, k, y(k), info(k))
  end do
  y(4) = smooth(x, 3, 1)
  y(5) = smooth(x * x, 3, 2)
  y(6) = smooth(sin(x), 5, 3)
end subroutine alloc_save

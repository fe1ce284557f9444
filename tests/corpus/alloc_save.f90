! SAVE allocatable locals: a history grown by one element on every call
! (allocated on the first), and a work array of a module procedure whose
! module has SAVE in its specification part, kept across calls and
! reallocated when a call needs more room.
! adjit-test: --entry alloc_save --set x=0.5
! adjit-test: --entry alloc_save --set x=-1.25
module alloc_save_m
  implicit none
  save
contains
  subroutine record(x, total, length)
    double precision, intent(in) :: x
    double precision, intent(out) :: total
    integer, intent(out) :: length
    double precision, allocatable, save :: hist(:)
    if (.not. allocated(hist)) allocate(hist(0))
    hist = [hist, x * (size(hist) + 1)]
    total = sum(hist ** 2)
    length = size(hist)
  end subroutine record

  double precision function smooth(x, m)
    double precision, intent(in) :: x
    integer, intent(in) :: m
    double precision, allocatable :: buf(:)
    save buf
    integer :: i
    if (allocated(buf)) then
      if (size(buf) < m) deallocate(buf)
    end if
    if (.not. allocated(buf)) then
      allocate(buf(m))
      buf = 0
    end if
    do i = 1, m
      buf(i) = 0.5d0 * buf(i) + x * i
    end do
    smooth = sum(buf(1:m)) / m
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
    call record(x + k, y(k), info(k))
  end do
  y(4) = smooth(x, 3)
  y(5) = smooth(x * x, 3)
  y(6) = smooth(sin(x), 5)
end subroutine alloc_save

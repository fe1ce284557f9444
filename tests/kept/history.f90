! A SAVE history grown on every call, and a module array reallocated to
! the size each call asks for.
module hist_m
  implicit none
  real(8), allocatable :: w(:)
end module hist_m

subroutine record(x, total, length)
  implicit none
  real(8), intent(in) :: x
  real(8), intent(out) :: total
  integer, intent(out) :: length
  real(8), allocatable, save :: hist(:)
  if (.not. allocated(hist)) allocate(hist(0))
  hist = [hist, x * (size(hist) + 1)]
  total = sum(hist ** 2)
  length = size(hist)
end subroutine record

subroutine resize(n, x, s)
  use hist_m
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x
  real(8), intent(out) :: s
  integer :: i
  if (allocated(w)) then
    s = sum(w)
    deallocate(w)
  else
    s = -1
  end if
  if (n > 0) then
    allocate(w(0:n - 1))
    w = [(x * i, i = 0, n - 1)]
  end if
end subroutine resize

! Conditions whose second operand is only meaningful when the first holds,
! as library code writes them and gfortran runs them: a table search whose
! DO WHILE stops before reading past the end, an ALLOCATABLE work array
! and a deferred-length option tested for allocation in the same IF, a
! function with a side effect (a call counter) that a decided `.and.` /
! `.or.` does not call, and ELSE IF / .NOT. forms. (gfortran evaluates the
! second operand of a decided `.and.` when it has no side effect, so an
! absent OPTIONAL or an unallocated array read there would crash its
! golden run: those tests stay nested.)
! adjit-test: --entry interp_run --set xq=0.35,1.7,2.95,4.2 --set scale=1.3
! adjit-test: --entry interp_run --set xq=-0.5,0.3,2.2,3.3 --set scale=0.7
module table_search
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer :: probes = 0
  real(dp), allocatable :: work(:)
  character(len=:), allocatable :: rule
contains
  !> True when xa(j) is below x; counts its calls.
  logical function below(xa, j, x)
    real(dp), intent(in) :: xa(:), x
    integer, intent(in) :: j
    probes = probes + 1
    below = xa(j) < x
  end function below

  !> The index of the last knot not above x (0 below the table).
  integer function bracket(xa, x) result(j)
    real(dp), intent(in) :: xa(:), x
    integer :: n
    n = size(xa)
    j = 1
    do while (j <= n .and. xa(min(j, n)) <= x .and. xa(j) <= x)
      j = j + 1
    end do
    j = j - 1
  end function bracket

  !> Interpolates ya over xa at x, linearly or by the nearest knot as
  !> `rule` says (linear when it is not set), weighted by w if present.
  real(dp) function interp(xa, ya, x, w) result(y)
    real(dp), intent(in) :: xa(:), ya(:), x
    real(dp), intent(in), optional :: w
    integer :: j, n
    real(dp) :: t
    n = size(xa)
    j = bracket(xa, x)
    if (j < 1) then
      y = ya(1)
    else if (.not. (j < n .and. xa(j + 1) > xa(j))) then
      y = ya(n)
    else if (allocated(rule) .and. rule == 'nearest') then
      t = (x - xa(j)) / (xa(j + 1) - xa(j))
      y = merge(ya(j), ya(j + 1), t < 0.5_dp)
    else
      t = (x - xa(j)) / (xa(j + 1) - xa(j))
      y = (1 - t) * ya(j) + t * ya(j + 1)
    end if
    if (present(w)) then
      if (w > 0) y = w * y
    end if
    if (allocated(work)) then
      if (size(work) >= 1 .and. work(1) > 0) y = y + work(1) * x
    end if
  end function interp
end module table_search

subroutine interp_run(xq, scale, yq, calls)
  use table_search
  implicit none
  real(dp), intent(in) :: xq(4), scale
  real(dp), intent(out) :: yq(4)
  integer, intent(out) :: calls
  real(dp) :: xa(5), ya(5)
  integer :: i, k
  xa = [0.0_dp, 1.0_dp, 2.0_dp, 3.0_dp, 4.0_dp]
  ya = [1.0_dp, 2.5_dp, 2.0_dp, 3.5_dp, 3.0_dp] * scale
  probes = 0
  yq(1) = interp(xa, ya, xq(1))
  yq(2) = interp(xa, ya, xq(2), w=scale)
  allocate(work(2))
  work = [0.1_dp * scale, 0.0_dp]
  yq(3) = interp(xa, ya, xq(3), w=-1.0_dp)
  rule = 'nearest'
  yq(4) = interp(xa, ya, xq(4))
  deallocate(work)
  ! The counter only moves where the first operand does not decide.
  do i = 1, 4
    k = min(i + 1, 5)
    if (xq(i) > 10 .and. below(xa, k, xq(i))) yq(i) = yq(i) + 1
    if (xq(i) < 10 .or. below(xa, k, xq(i))) yq(i) = yq(i) + xq(i)**2
    if (xq(i) > 1 .and. below(xa, k, xq(i))) yq(i) = yq(i) * scale
  end do
  calls = probes
  deallocate(rule)
end subroutine interp_run

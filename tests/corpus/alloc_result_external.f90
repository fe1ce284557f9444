! Functions returning ALLOCATABLE arrays outside modules: an external
! function seen through an interface block (its result grown with
! `r = [r, v]` to a size decided by the data), an internal function with a
! rank-2 result, both passed as actual arguments to explicit-shape and
! assumed-shape dummies and called in a loop with results of changing size.
! adjit-test: --entry smooth_residual --set n=6 --set h=0.6 --set u=1,-0.5,2,0.75,-1.5,0.5
! adjit-test: --entry smooth_residual --set n=4 --set h=-0.5 --set u=0.25,1.5,-2,1
function above(u, floor) result(r)
  implicit none
  real(8), intent(in) :: u(:), floor
  real(8), allocatable :: r(:)
  integer :: i
  allocate(r(0))
  do i = 1, size(u)
    if (u(i) > floor) r = [r, u(i) - floor]
  end do
end function above

subroutine accumulate(m, v, total)
  implicit none
  integer, intent(in) :: m
  real(8), intent(in) :: v(m)
  real(8), intent(inout) :: total
  total = total + sum(v * v)
end subroutine accumulate

subroutine smooth_residual(n, h, u, res, counts)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: h, u(n)
  real(8), intent(out) :: res(3)
  integer, intent(out) :: counts(3)
  interface
    function above(u, floor) result(r)
      real(8), intent(in) :: u(:), floor
      real(8), allocatable :: r(:)
    end function above
  end interface
  real(8) :: level
  integer :: k
  res = 0
  do k = 1, 3
    level = (k - 2) * h
    counts(k) = size(above(u, level))
    call accumulate(size(above(u, level)), above(u, level), res(1))
  end do
  call frobenius(stencil(u, h), res(2))
  res(3) = sum(matmul(stencil(u, h), u(1:2))) + sum(above(stencil_sum(u), 0d0))
contains
  subroutine frobenius(a, total)
    real(8), intent(in) :: a(:, :)
    real(8), intent(inout) :: total
    total = total + sum(a * a) / size(a, 2)
  end subroutine frobenius

  function stencil(v, w) result(s)
    real(8), intent(in) :: v(:), w
    real(8), allocatable :: s(:, :)
    integer :: i
    allocate(s(size(v) - 2, 2))
    do i = 2, size(v) - 1
      s(i - 1, 1) = v(i - 1) - 2 * v(i) + v(i + 1)
      s(i - 1, 2) = w * (v(i + 1) - v(i - 1))
    end do
  end function stencil

  function stencil_sum(v) result(t)
    real(8), intent(in) :: v(:)
    real(8), allocatable :: t(:)
    t = sum(stencil(v, 1d0), dim=2)
  end function stencil_sum
end subroutine smooth_residual

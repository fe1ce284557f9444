! Functions returning ALLOCATABLE arrays, as a module of vector utilities
! used by a residual routine: the result sized by ALLOCATE with computed
! bounds, by a reallocating assignment, grown in a loop (`r = [r, v]`),
! a rank-2 outer product; referenced as the right-hand side of assignments
! to ALLOCATABLE and explicit-shape targets, in expressions, in SUM,
! DOT_PRODUCT, MATMUL and SIZE, and as actual arguments; one function
! called twice with results of different sizes in one statement.
! adjit-test: --entry residual --set x=0.5,-1.25,2,0.75,1.5 --set w=2,-1
! adjit-test: --entry residual --set x=1,2,3,4,-5 --set w=0.5,0.25
module vec_utils
  implicit none
contains
  function scaled(x, a) result(r)
    real(8), intent(in) :: x(:), a
    real(8), allocatable :: r(:)
    allocate(r(size(x)))
    r = a * x**2
  end function

  function squares(x) result(r)
    real(8), intent(in) :: x(:)
    real(8), allocatable :: r(:)
    r = x * x
  end function

  function evens(x) result(r)
    real(8), intent(in) :: x(:)
    real(8), allocatable :: r(:)
    r = x(2::2)
  end function

  function positives(x) result(r)
    real(8), intent(in) :: x(:)
    real(8), allocatable :: r(:)
    integer :: i
    allocate(r(0))
    do i = 1, size(x)
      if (x(i) > 0) r = [r, sin(x(i)) + x(i)]
    end do
  end function

  function outer(u, v) result(m)
    real(8), intent(in) :: u(:), v(:)
    real(8), allocatable :: m(:, :)
    integer :: i, j
    allocate(m(size(u), size(v)))
    do j = 1, size(v)
      do i = 1, size(u)
        m(i, j) = u(i) * v(j)
      end do
    end do
  end function

  function window(x, lo, n) result(r)
    real(8), intent(in) :: x(:)
    integer, intent(in) :: lo, n
    real(8), allocatable :: r(:)
    allocate(r(n))
    r = x(lo:lo + n - 1)
  end function

  real(8) function weighted(v, c)
    real(8), intent(in) :: v(:), c
    weighted = c * sum(v * v)
  end function
end module

subroutine residual(x, w, y, m)
  use vec_utils
  implicit none
  real(8), intent(in) :: x(5), w(2)
  real(8), intent(out) :: y(8), m(5)
  real(8), allocatable :: t(:), p(:, :)
  real(8) :: fixed(5)
  integer :: k
  t = scaled(x, 3d0)
  y(1) = sum(t)
  y(2) = sum(scaled(x, 2d0)) + dot_product(evens(x), w(1:2))
  y(3) = weighted(squares(x), 0.5d0)
  fixed = squares(x) - scaled(x, 1d0) + x
  m = fixed
  p = outer(x, w)
  y(4) = sum(matmul(p, w))
  y(5) = size(positives(x)) + sum(positives(x))
  y(6) = 0
  do k = 1, 3
    y(6) = y(6) + sum(window(x, 1, k + 1) * window(x, 5 - k, k + 1))
  end do
  t = [t, evens(t)]
  y(7) = sum(t) + size(t)
  y(8) = sum(window(scaled(x, 2d0), 2, 3)) * sum(window(x, 1, 2))
end subroutine

! A solver module keeps the state of its last mesh in module variables
! whose types nest arrays of structures: `last%cells(j)%s%h(i)` (an
! array of structures inside a scalar, depth 2), `top%m%grid(i, j)%s%k(a, b)`
! (depth 3, a rank-2 array of structures holding a rank-2 array), and
! `top%extra(j)%q`. Elements are set in loops, read back, passed to
! assumed-shape and explicit-shape dummies (`last%cells(j)%s%h`) and to
! scalar dummies (`top%extra(j)%q`, changed by the callee). The stored
! values depend on `x`, so derivatives run through every level.
! adjit-test: --entry step --set x=0.75
! adjit-test: --entry step --set x=-1.5
module mesh_state
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type state
    real(dp) :: h(2)
    real(dp) :: k(2, 2)
  end type
  type cell
    type(state) :: s
    real(dp) :: q = 1.0_dp
  end type
  type mesh
    type(cell) :: cells(3)
    type(cell) :: grid(2, 2)
  end type
  type tier
    type(mesh) :: m
    type(cell) :: extra(2)
    integer :: visits = 0
  end type
  type(mesh), save :: last
  type(tier), save :: top
contains
  ! The weighted sum of the heights `h`.
  real(dp) function weigh(h, w)
    real(dp), intent(in) :: h(:)
    real(dp), intent(in) :: w
    weigh = w * h(1) + h(size(h))
  end function weigh

  ! The trace of the 2x2 matrix `k` (explicit shape).
  real(dp) function trace2(k)
    real(dp), intent(in) :: k(2, 2)
    trace2 = k(1, 1) + k(2, 2)
  end function trace2

  ! Scales `q` by `f`.
  subroutine scale(q, f)
    real(dp), intent(inout) :: q
    real(dp), intent(in) :: f
    q = q * f
  end subroutine scale

  subroutine step(x, y)
    real(dp), intent(in) :: x
    real(dp), intent(out) :: y(5)
    integer :: i, j, a, b
    do j = 1, 3
      last%cells(j)%s%h(1) = x * j
      last%cells(j)%s%h(2) = x * x
      last%cells(j)%q = x + j
    end do
    y(1) = sum(last%cells(2)%s%h)
    y(2) = 0
    do j = 1, 3
      y(2) = y(2) + weigh(last%cells(j)%s%h, last%cells(j)%q)
    end do
    do j = 1, 2
      do i = 1, 2
        do b = 1, 2
          do a = 1, 2
            top%m%grid(i, j)%s%k(a, b) = x**(a + b - 1) * (i + 2 * j)
          end do
        end do
        top%m%cells(i + j - 1)%s%h = [x, 2 * x]
      end do
      top%extra(j)%q = x * j
      call scale(top%extra(j)%q, x)
    end do
    top%visits = top%visits + 1
    y(3) = trace2(top%m%grid(2, 1)%s%k) + top%m%grid(1, 2)%s%k(1, 2)
    y(4) = top%extra(1)%q + top%extra(2)%q * top%m%cells(3)%s%h(2)
    y(5) = top%m%cells(1)%q * last%cells(3)%s%h(1)
  end subroutine step
end module mesh_state

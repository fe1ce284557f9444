! Contiguous sections given to assumed-shape dummies without a copy: the
! column loop of MINPACK-style code (a(:, j) to an axpy-like routine that
! takes its length from SIZE), a tail a(k:n) written by the callee, a rank-2
! block m(:, 2:3) to a rank-2 assumed-shape dummy, a rank-3 slab, an empty
! section a(n+1:n), sections of an ALLOCATABLE array and sections passed on
! by the callee (an assumed-shape dummy's own section to another callee).
! adjit-test: --entry columns --set n=4 --set a=0.5,-1,2,1.5,0.25,-2,3,1,-0.75,1.25,0.5,-1.5,2,0.3,-0.6,1.1 --set x=1,-2,0.5,3 --set c=0.7
! adjit-test: --entry columns --set n=3 --set a=1,2,-1,0.5,-0.5,3,0.25,-2,1.5 --set x=-1,0.25,2 --set c=-1.5
module slice_ops
  implicit none
contains
  ! y = y + alpha x, over the section's own length
  subroutine axpy(alpha, x, y)
    double precision, intent(in) :: alpha
    double precision, intent(in) :: x(:)
    double precision, intent(inout) :: y(:)
    integer :: i
    do i = 1, size(y)
      y(i) = y(i) + alpha * x(i)
    end do
  end subroutine axpy

  ! sum of v(i)**2 weighted by i, plus the length
  double precision function wnorm(v)
    double precision, intent(in) :: v(:)
    integer :: i
    wnorm = size(v)
    do i = 1, size(v)
      wnorm = wnorm + i * v(i)**2
    end do
  end function wnorm

  ! v(i) = v(i) * (1 + s * i), then the tail passed on to wnorm
  subroutine stretch(s, v, t)
    double precision, intent(in) :: s
    double precision, intent(inout) :: v(:)
    double precision, intent(out) :: t
    integer :: i
    do i = 1, size(v)
      v(i) = v(i) * (1 + s * i)
    end do
    t = 0
    if (size(v) > 1) t = wnorm(v(2:))
  end subroutine stretch

  ! s = sum m(i, j) sin(i + 2 j) + 10 ubound(m, 1) + 100 ubound(m, 2)
  double precision function block_sum(m)
    double precision, intent(in) :: m(:, :)
    integer :: i, j
    block_sum = 10 * ubound(m, 1) + 100 * ubound(m, 2)
    do j = 1, size(m, 2)
      do i = 1, size(m, 1)
        block_sum = block_sum + m(i, j) * sin(dble(i + 2 * j))
      end do
    end do
  end function block_sum
end module slice_ops

subroutine columns(n, a, x, c, y, r)
  use slice_ops
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n, n), x(n)
  double precision, intent(in) :: c
  double precision, intent(out) :: y(n), r(6)
  double precision, allocatable :: w(:)
  double precision :: cube(2, n, 2)
  integer :: j
  y = 0
  ! The column loop: y = A (c x)
  do j = 1, n
    call axpy(c * x(j), a(:, j), y)
  end do
  ! A tail of a column, written by the callee
  call stretch(c, a(2:n, 1), r(1))
  r(2) = wnorm(x(2:n)) + wnorm(x(n+1:n))
  r(3) = block_sum(a(:, 2:3))
  allocate(w(2 * n))
  w(1:n) = x
  w(n+1:) = y
  call axpy(c, x, w(n+1:2*n))
  r(4) = wnorm(w(2:2*n-1))
  cube(1, :, 1) = x
  cube(2, :, 1) = y
  cube(:, :, 2) = a(1:2, :)
  r(5) = block_sum(cube(:, :, 2)) + block_sum(cube(:, 2:n, 1))
  call stretch(-c, x(1:n-1), r(6))
  y = y + w(n+1:2*n)
end subroutine columns

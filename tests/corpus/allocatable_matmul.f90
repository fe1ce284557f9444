! Reallocation on assignment of MATMUL to an ALLOCATABLE array: unallocated,
! of another shape, and reading the target itself (`c = matmul(c, a)`,
! through a section), matrix-matrix, matrix-vector and vector-matrix.
! adjit-test: --entry alloc_matmul --set n=3 --set x=1,2,3
! adjit-test: --entry alloc_matmul --set n=4 --set x=0.5,-1,2,0.25
subroutine alloc_matmul(n, x, y, info)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  integer, intent(out) :: info(4)
  double precision, allocatable :: a(:, :), b(:, :), c(:, :), v(:)
  integer :: i, j
  allocate(a(n, n), b(n, 2))
  do j = 1, n
    do i = 1, n
      a(i, j) = x(i) * j + 0.1d0 * i
    end do
    b(j, 1) = x(j)
    b(j, 2) = x(j) ** 2
  end do
  c = matmul(a, b)
  info(1) = size(c, 1) * 10 + size(c, 2)
  y = sum(c)
  c = matmul(transpose(b), a)
  info(2) = size(c, 1) * 10 + size(c, 2)
  y = y + sum(c * c) * 0.001d0
  c = a
  c = matmul(c, a)
  y = y + sum(c) * 0.1d0
  c = matmul(c(1:n-1, :), a) * 0.5d0
  info(3) = size(c, 1) * 10 + size(c, 2)
  y = y + sum(c)
  v = matmul(a, x)
  y = y + sum(v)
  v = matmul(v, a)
  y = y + sum(v * x) * 0.01d0
  v = matmul(v(1:n-1), a(1:n-1, 2:n))
  info(4) = size(v)
  y = y + sum(v) * 0.01d0
end subroutine alloc_matmul

subroutine f(x, y)
  double precision x(3), y(3)
  double precision a(3,3)
  integer i, j
  do j = 1, 3
    do i = 1, 3
      a(i, j) = 1d0 / (i + j - 1) + x(i) * x(j)
    end do
  end do
  y = matmul(a, x)
end subroutine

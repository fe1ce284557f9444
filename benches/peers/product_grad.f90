! Hand-written gradient of y = x(1)*...*x(n) by prefix and suffix products,
! the peer for adjit's adjoint.
subroutine product_grad(n, x, y, g)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y, g(n)
  double precision pre, suf
  integer i
  pre = 1
  do i = 1, n
    g(i) = pre
    pre = pre*x(i)
  end do
  y = pre
  suf = 1
  do i = n, 1, -1
    g(i) = g(i)*suf
    suf = suf*x(i)
  end do
end subroutine product_grad

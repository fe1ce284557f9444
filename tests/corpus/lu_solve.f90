! Gaussian elimination with partial pivoting (row swaps, pivot search with
! MAX-like logic, integer pivot vector), then triangular solves: A x = b.
! adjit-test: --entry lusolve --set n=3 --set a=2,4,-2,1,-6,7,1,0,2 --set b=5,-2,9
! adjit-test: --entry lusolve --set n=2 --set a=1e-3,1,1,1 --set b=1,2
subroutine lusolve(n, a, b, x, piv, det)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n, n), b(n)
  double precision, intent(out) :: x(n), det
  integer, intent(out) :: piv(n)
  integer :: i, j, k, p
  double precision :: t, f
  det = 1
  do k = 1, n
    p = k
    do i = k + 1, n
      if (abs(a(i, k)) > abs(a(p, k))) p = i
    end do
    piv(k) = p
    if (p /= k) then
      do j = 1, n
        t = a(k, j)
        a(k, j) = a(p, j)
        a(p, j) = t
      end do
      t = b(k)
      b(k) = b(p)
      b(p) = t
      det = -det
    end if
    det = det*a(k, k)
    do i = k + 1, n
      f = a(i, k)/a(k, k)
      a(i, k) = f
      do j = k + 1, n
        a(i, j) = a(i, j) - f*a(k, j)
      end do
      b(i) = b(i) - f*b(k)
    end do
  end do
  do i = n, 1, -1
    t = b(i)
    do j = i + 1, n
      t = t - a(i, j)*x(j)
    end do
    x(i) = t/a(i, i)
  end do
end subroutine lusolve

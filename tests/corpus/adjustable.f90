! Adjustable arrays: extents and bounds given by dummy arguments and
! expressions of them (x(n*m), w(0:n-1, 2*m)), a leading-dimension argument,
! passed on to a callee that sees a different shape.
! adjit-test: --entry adjust --set n=3 --set m=2 --set x=1,2,3,4,5,6
! adjit-test: --entry adjust --set n=2 --set m=1 --set x=0.5,-0.5
subroutine adjust(n, m, x, w, colsum)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: x(n*m)
  double precision, intent(out) :: w(0:n-1, 2*m), colsum(2*m)
  integer :: i, j
  do j = 1, 2*m
    do i = 0, n - 1
      w(i, j) = x(mod(i + (j - 1)*n, n*m) + 1)*j
    end do
  end do
  call sums(n, 2*m, w, colsum)
end subroutine adjust

subroutine sums(lda, ncol, a, s)
  implicit none
  integer, intent(in) :: lda, ncol
  double precision, intent(in) :: a(lda, ncol)
  double precision, intent(out) :: s(ncol)
  integer :: i, j
  do j = 1, ncol
    s(j) = 0
    do i = 1, lda
      s(j) = s(j) + a(i, j)*i
    end do
  end do
end subroutine sums

! A MINPACK-style column loop: y = A x through an axpy routine taking each
! column a(:, j) as an assumed-shape dummy. `columns` passes the contiguous
! column as a slice of `a` (no copy); `columns_copied` passes the same
! column as a(1:n:s, j) with s = 1, a section whose stride is not known to
! be 1, which goes through a temporary copied in and out (the way every
! section given to an assumed-shape dummy went before slices):
!
!   adjit bench examples/column_sections.f90 --entry columns --size n=100,1000 --of y --wrt x,a --set s=1
!   adjit bench examples/column_sections.f90 --entry columns_copied --size n=100,1000 --of y --wrt x,a --set s=1
module column_ops
  implicit none
contains
  subroutine axpy(alpha, x, y)
    double precision, intent(in) :: alpha, x(:)
    double precision, intent(inout) :: y(:)
    integer :: i
    do i = 1, size(y)
      y(i) = y(i) + alpha * x(i)
    end do
  end subroutine axpy
end module column_ops

subroutine columns(n, s, a, x, y)
  use column_ops
  implicit none
  integer, intent(in) :: n, s
  double precision, intent(in) :: a(n, n), x(n)
  double precision, intent(out) :: y(n)
  integer :: j
  y = 0
  do j = 1, n
    call axpy(x(j), a(:, j), y)
  end do
end subroutine columns

subroutine columns_copied(n, s, a, x, y)
  use column_ops
  implicit none
  integer, intent(in) :: n, s
  double precision, intent(in) :: a(n, n), x(n)
  double precision, intent(out) :: y(n)
  integer :: j
  y = 0
  do j = 1, n
    call axpy(x(j), a(1:n:s, j), y)
  end do
end subroutine columns_copied

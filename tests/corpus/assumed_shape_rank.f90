! Assumed-shape dummies of rank 2 and 3 (`a(:, :)`, `b(0:, :, :)`): every
! extent but the last is a hidden parameter the caller fills from the
! actual's shape; SIZE (with and without DIM=), LBOUND, UBOUND, whole-array
! operations on the dummy, and the dummy passed on to another assumed-shape
! dummy.
! adjit-test: --entry drive --set x=0.75
! adjit-test: --entry drive --set x=-1.5
module mat
  implicit none
contains
  subroutine rowsum(a, r)
    double precision, intent(in) :: a(:, :)
    double precision, intent(out) :: r(:)
    integer :: i, j
    r = 0
    do j = 1, size(a, 2)
      do i = 1, size(a, 1)
        r(i) = r(i) + a(i, j) * j
      end do
    end do
  end subroutine rowsum
  double precision function total3(b)
    double precision, intent(in) :: b(0:, :, :)
    integer :: i, j, k
    total3 = 0
    do k = lbound(b, 3), ubound(b, 3)
      do j = 1, size(b, 2)
        do i = 0, ubound(b, 1)
          total3 = total3 + b(i, j, k) * (i + 2*j + 3*k)
        end do
      end do
    end do
    total3 = total3 + size(b)
  end function total3
  subroutine scale2(a, s)
    double precision, intent(inout) :: a(:, :)
    double precision, intent(in) :: s
    a = a * s
    call inner(a)
  end subroutine scale2
  subroutine inner(a)
    double precision, intent(inout) :: a(:, :)
    a(1, size(a, 2)) = a(1, size(a, 2)) + sum(a)
  end subroutine inner
end module mat

subroutine drive(x, r, t, m)
  use mat
  implicit none
  double precision, intent(in) :: x
  double precision, intent(out) :: r(3), t, m(3, 2)
  double precision :: a(3, 4), b(2, 3, 2)
  integer :: i, j, k
  do j = 1, 4
    do i = 1, 3
      a(i, j) = x * i + j**2
    end do
  end do
  do k = 1, 2
    do j = 1, 3
      do i = 1, 2
        b(i, j, k) = sin(x * (i + j - k))
      end do
    end do
  end do
  call rowsum(a, r)
  t = total3(b)
  m = a(:, 1:2)
  call scale2(m, x)
end subroutine drive

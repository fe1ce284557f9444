! Arrays of rank 1 to 7 with explicit lower bounds (a(0:n, m), b(-1:1, ...)),
! local and dummy, filled and reduced element by element in column-major
! order.
! adjit-test: --entry ranks --set n=2 --set m=3
! adjit-test: --entry ranks --set n=1 --set m=2
subroutine ranks(n, m, a1, a2, a3, s)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(out) :: a1(-2:n), a2(0:n, m), a3(2, 0:1, -1:1)
  double precision, intent(out) :: s(7)
  double precision :: a4(2, 2, 2, 2), a5(2, 1, 2, 1, 2)
  double precision :: a6(0:1, 2, 1, 2, 1, 2), a7(2, 1, 1, 2, 1, 1, -1:0)
  integer :: i, j, k, l, p, q, r
  do i = -2, n
    a1(i) = i*1.5d0
  end do
  do j = 1, m
    do i = 0, n
      a2(i, j) = i + 10*j
    end do
  end do
  do k = -1, 1
    do j = 0, 1
      do i = 1, 2
        a3(i, j, k) = i - 2*j + 4*k
      end do
    end do
  end do
  s = 0
  do l = 1, 2
    do k = 1, 2
      do j = 1, 2
        do i = 1, 2
          a4(i, j, k, l) = i*j + k*l
          s(4) = s(4) + a4(i, j, k, l)*(i + l)
        end do
      end do
    end do
  end do
  do p = 1, 2
    do k = 1, 2
      do i = 1, 2
        a5(i, 1, k, 1, p) = 0.5d0*i + k - p
        s(5) = s(5) + a5(i, 1, k, 1, p)**2
      end do
    end do
  end do
  do q = 1, 2
    do l = 1, 2
      do j = 1, 2
        do i = 0, 1
          a6(i, j, 1, l, 1, q) = i + j*l - q
          s(6) = s(6) + a6(i, j, 1, l, 1, q)*j
        end do
      end do
    end do
  end do
  do r = -1, 0
    do l = 1, 2
      do i = 1, 2
        a7(i, 1, 1, l, 1, 1, r) = i*l + r
        s(7) = s(7) + a7(i, 1, 1, l, 1, 1, r)*(r + 2)
      end do
    end do
  end do
  s(1) = a1(-2) + a1(n)
  s(2) = a2(0, 1) + a2(n, m)
  s(3) = a3(1, 0, -1) + a3(2, 1, 1)
end subroutine ranks

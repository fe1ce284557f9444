! WHERE / ELSEWHERE (block with masked ELSEWHERE, one-line form, on
! sections, with a reduction in the mask), FORALL (construct with a mask,
! one-line, two indices with a stride), a section assigned from an
! expression reading the same section, DO CONCURRENT (with a mask); the index
! variables keep their values outside.
! adjit-test: --entry masked --set n=6 --set x=1,-2,3,-4,0.5,6 --set c=0.7
! adjit-test: --entry masked --set n=5 --set x=-1,0.25,2,-3,8 --set c=-1.5
subroutine masked(n, x, c, y, z, m, w, k)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), c
  double precision, intent(out) :: y(n), z(n), m(3, n), w(n)
  integer, intent(out) :: k
  integer :: i, j
  k = 42
  i = 7
  y = 0
  where (x > 0)
    y = sqrt(x) * c
  elsewhere (x < -2.5d0)
    y = x**2
  elsewhere
    y = -x * c
  end where
  z = x
  where (z < 0) z = exp(z) + c
  y(2:n) = y(2:n) + z(1:n-1)
  where (x(1:n-1) > sum(x) / n) z(2:n) = z(2:n) * x(1:n-1)
  forall (i = 1:n, x(i) /= 0) w(i) = c / x(i) + y(i)
  forall (i = 1:n, x(i) == 0) w(i) = c
  m = 0
  forall (i = 1:3, j = 1:n:2)
    m(i, j) = i * x(j) + c
    m(i, j) = m(i, j) * y(j) - i
  end forall
  do concurrent (j = 1:n, x(j) > -1)
    w(j) = w(j) + sin(x(j)) * z(j)
  end do
  k = k + i
end subroutine masked

! Array sections, array expressions and array constructors as actual
! arguments: contiguous sections (a(2:n), m(:, j), m(:, 2:3)) by address
! to explicit-shape and assumed-size dummies; strided sections and rows
! (a(1:n:2), m(i, :)) by copy-in / copy-out, also written by the callee;
! expressions (2*x + c) and constructors ([c, 1d0, c*c]) through temporaries;
! a function taking a section.
! adjit-test: --entry sections --set n=6 --set x=1,-2,3,-4,0.5,6 --set c=0.7
! adjit-test: --entry sections --set n=5 --set x=-1,0.25,2,-3,8 --set c=-1.5
subroutine scale(k, v, f)
  implicit none
  integer, intent(in) :: k
  double precision, intent(inout) :: v(k)
  double precision, intent(in) :: f
  integer :: i
  do i = 1, k
    v(i) = v(i) * f + i
  end do
end subroutine scale

subroutine accum(k, v, s)
  implicit none
  integer, intent(in) :: k
  double precision, intent(in) :: v(*)
  double precision, intent(inout) :: s
  integer :: i
  do i = 1, k
    s = s + v(i)**2
  end do
end subroutine accum

double precision function wsum(k, v)
  implicit none
  integer, intent(in) :: k
  double precision, intent(in) :: v(k)
  integer :: i
  wsum = 0
  do i = 1, k
    wsum = wsum + i * v(i)
  end do
end function wsum

subroutine sections(n, x, c, y, m, s, t)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), c
  double precision, intent(out) :: y(n), m(3, n), s, t
  double precision :: wsum
  integer :: i, j
  y = x
  call scale(n - 1, y(2:n), c)
  call scale((n + 1) / 2, y(1:n:2), c * c)
  do j = 1, n
    do i = 1, 3
      m(i, j) = x(j) * i + c
    end do
  end do
  call scale(3, m(:, 2), c)
  call scale(6, m(:, 2:3), 0.5d0)
  i = 2
  call scale(n, m(i, :), c)
  call scale(2, m(2:3, n), -c)
  s = 0
  call accum(n, 2 * x + c, s)
  call accum(3, [c, 1d0, c * c], s)
  call accum(n / 2, y(n:1:-2), s)
  t = wsum(n - 2, x(3:n)) + wsum(2, m(3, 1:2)) + wsum(n, sin(x) * c)
end subroutine sections

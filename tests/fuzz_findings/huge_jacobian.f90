! CALL with scalars, whole arrays, array elements (sequence association) and
! expressions (passed by value into a temporary); RETURN from the middle of a
! subroutine and from a function.
! adjit-test: --entry caller --set n=5 --set x=1,2,3,4,5 --set lim=10
! adjit-test: --entry caller --set n=3 --set x=-1,5,0.5 --set lim=2
subroutine caller(n, x, lim, acc, tails, pos)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  double precision, intent(in) :: lim
  double precision, intent(out) :: acc, tails(2183647)
  integer, intent(out) :: pos
  double precision :: firstpos
  external firstpos
  integer :: k
  acc = 0
  call accumulate(n, x, lim, acc)
  call tailsum(n - 1, x(2), tails(1))
  call tailsum(2, x(n - 1), tails(2))
  call rescale(x(1), 1.0d300*lim + 1)
  pos = 0
  acc = acc + firstpos(n, x, pos)
  do k = 1, n
    if (x(k) < 0) return
  end do
  acc = -acc
end subroutine caller

subroutine accumulate(n, x, lim, acc)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), lim
  double precision, intent(inout) :: acc
  integer :: i
  do i = 1, n
    acc = acc + x(i)
    if (acc > lim) return
  end do
  acc = acc*100
end subroutine accumulate

subroutine tailsum(m, y, s)
  implicit none
  integer, intent(in) :: m
  double precision, intent(in) :: y(m)
  double precision, intent(out) :: s
  integer :: i
  s = 0
  do i = 1, m
    s = s + i*y(i)
  end do
end subroutine tailsum

subroutine rescale(y, f)
  implicit none
  double precision, intent(inout) :: y
  double precision, intent(in) :: f
  y = y*f
end subroutine rescale

double precision function firstpos(n, x, pos)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  integer, intent(inout) :: pos
  integer :: i
  firstpos = -1
  do i = 1, n
    if (x(i) > 0) then
      firstpos = x(i)
      pos = i
      return
    end if
  end do
end function firstpos

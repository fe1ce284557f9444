! A function that formats a label with an internal WRITE, referenced
! among the items of a PRINT and of another internal WRITE (Fortran 2003
! allows internal I/O inside an I/O statement's items): the outer
! statement keeps its items and its format, and the IOSTAT= of the inner
! statement is its own.
! adjit-test: --entry report --set n=3 --set x=0.5,1.5,-2
! adjit-test: --entry report --set n=2 --set x=4,0.25
module labels
  implicit none
contains
  function tag(k) result(s)
    integer, intent(in) :: k
    character(len=12) :: s
    integer :: ios
    write(s, '(a,i3.3)', iostat=ios) 'item_', k
    if (ios /= 0) s = 'bad'
  end function tag
end module labels

subroutine report(n, x, total)
  use labels
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: total
  character(len=40) :: line
  integer :: i, ios
  total = 0
  do i = 1, n
    total = total + x(i)**2 * i
    print '(a,1x,a,1x,f8.3)', 'row', trim(tag(i)), x(i)
    write(line, '(a,"=",a,":",i0)', iostat=ios) 'entry', trim(tag(10 * i)), i
    print *, trim(line), ios
  end do
end subroutine report

! Array constructors of strings with implied DO and array items: a report
! module labels its columns with a function doing an internal WRITE
! (`labels = [(column_label(i), i = 1, n)]`), joins tables
! (`all = [character(len=6) :: methods, 'extra']`, `[adjustl(raw(2:3)), labels(1:1)]`) into
! CHARACTER arrays of constant length and into deferred-length arrays,
! and reads a `character(len=*), parameter` table of methods (its length
! from its value). The method found by name picks the weights of the
! differentiable sum; a key among the labels (`col3`) is found only
! through the internal WRITE. (Emitted Fortran of this adjoint is refused:
! its forward sweep keeps the internal WRITE of `column_label`.)
! adjit-test: --entry report --set n=3 --set x=1.5 --set key=rk4
! adjit-test: --entry report --set n=4 --set x=-0.25 --set key=heun
! adjit-test: --entry report --set n=2 --set x=0.5 --set key=euler
! adjit-test: --entry report --set n=3 --set x=0.3 --set key=col3
module report_m
  implicit none
  character(len=*), parameter :: methods(3) = ['euler', 'heun ', 'rk4  ']
contains
  function column_label(i) result(s)
    integer, intent(in) :: i
    character(len=6) :: s
    write (s, '(a,i0)') 'col', i
  end function

  integer function position(names, key)
    character(len=*), intent(in) :: names(:)
    character(len=*), intent(in) :: key
    integer :: i
    position = 0
    do i = 1, size(names)
      if (names(i) == key) position = i
    end do
  end function

  subroutine report(n, x, key, y, labels, joined, width)
    integer, intent(in) :: n
    real(8), intent(in) :: x
    character(len=8), intent(in) :: key
    real(8), intent(out) :: y
    character(len=6), intent(out) :: labels(4)
    character(len=6), intent(out) :: joined(6)
    integer, intent(out) :: width
    character(len=:), allocatable :: all(:)
    character(len=7) :: raw(3)
    character(len=6) :: shown(8)
    integer :: i, k
    labels = 'empty'
    labels(1:n) = [(column_label(i), i = 1, n)]
    raw = ['  a    ', '  bb   ', ' ccc   ']
    joined = [character(len=6) :: adjustl(raw(2:3)), labels(1:1), methods]
    all = [character(len=6) :: methods, labels(1:n), 'extra']
    width = len(all) * 100 + size(all)
    k = position(all, key)
    y = 0d0
    do i = 1, k
      y = y + x**i / real(i, 8)
    end do
    if (k > size(methods)) y = y * x
    shown = ''
    shown(1:size(all)) = all
    print '(a,8(1x,a))', 'all:', (trim(shown(i)), i = 1, size(all))
  end subroutine
end module

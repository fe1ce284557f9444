! Internal files as a report routine and an option parser use them:
! WRITE into CHARACTER variables (a constant-length local, an assumed-
! length dummy, an array element) under formats with I0, I3.3, F, ES and
! literals, and list-directed; the labels trimmed and printed later;
! READ from CHARACTER values (list-directed and formatted F10.3 with an
! implied decimal point) with IOSTAT= giving a nonzero status on bad text
! or an empty string (the variable keeps its value); a WRITE that does not
! fit its variable is caught by IOSTAT= too. The values read are
! constants for derivatives: the energy's derivative is the weights'.
! adjit-test: --entry report --set n=3 --set x=1.5,-0.25,2 --set opt=2.5
! adjit-test: --entry report --set n=2 --set x=0.5,0.75 --set opt=tol=0.1
! adjit-test: --entry report --set n=4 --set x=1,2,3,4 --set opt=12345
module labels
  implicit none
  private
  public :: step_label, write_label, parse_real, parse_count, parse_fixed
contains
  ! 'name_007' for ('name', 7).
  function step_label(name, k) result(label)
    character(len=*), intent(in) :: name
    integer, intent(in) :: k
    character(len=40) :: label
    write(label, '(a,"_",i3.3)') trim(name), k
  end function step_label

  ! Writes 'k=<k> w=<w>' into the caller's variable (assumed length).
  subroutine write_label(k, w, out, ios)
    integer, intent(in) :: k
    real(8), intent(in) :: w
    character(len=*), intent(out) :: out
    integer, intent(out) :: ios
    write(out, '("k=",i0," w=",es10.3)', iostat=ios) k, w
  end subroutine write_label

  ! The real in text, or fallback when text does not hold one.
  real(8) function parse_real(text, fallback) result(v)
    character(len=*), intent(in) :: text
    real(8), intent(in) :: fallback
    integer :: ios
    v = fallback
    read(text, *, iostat=ios) v
    if (ios /= 0) v = fallback
  end function parse_real

  ! The integer in text and the READ's status.
  subroutine parse_count(text, n, ios)
    character(len=*), intent(in) :: text
    integer, intent(inout) :: n
    integer, intent(out) :: ios
    read(text, *, iostat=ios) n
  end subroutine parse_count
  ! The real in text under F10.3 (an implied decimal point), -1 when
  ! text does not hold one.
  subroutine parse_fixed(text, fixed, ios)
    character(len=*), intent(in) :: text
    real(8), intent(out) :: fixed
    integer, intent(out) :: ios
    read(text, '(f10.3)', iostat=ios) fixed
    if (ios /= 0) fixed = -1
  end subroutine parse_fixed
end module labels

subroutine report(n, x, opt, e, stat, width, fixed)
  use labels
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  character(len=*), intent(in) :: opt
  real(8), intent(out) :: e
  integer, intent(out) :: stat(4), width
  real(8), intent(out) :: fixed
  character(len=24) :: lines(2)
  character(len=12) :: short
  character(len=16) :: num
  character(len=40) :: lab
  real(8) :: w
  integer :: i, k, ios
  w = parse_real(opt, 1d0)
  k = 5
  call parse_count(opt, k, stat(1))
  call parse_fixed(opt, fixed, stat(2))
  call parse_count('', k, stat(3))
  e = 0
  do i = 1, n
    e = e + w*x(i)**2
  end do
  write(num, *) n
  write(lines(1), '(a,i0)') 'n=', n
  call write_label(k, w, lines(2), ios)
  call write_label(k, w, short, stat(4))
  width = len_trim(lines(2)) + 100*ios
  lab = step_label('step', n)
  print *, '[', trim(lab), '] [', trim(lines(1)), '] [', trim(lines(2)), &
      '] [', trim(adjustl(num)), ']'
  print '(a,f8.3,a,i0)', 'weight ', w, ' count ', k
end subroutine report

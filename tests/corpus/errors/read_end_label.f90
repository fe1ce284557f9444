! adjit-error: 7:29: unsupported Fortran: READ specifiers other than the unit, the format and one IOSTAT= (ERR=, END=, ADVANCE=, IOMSG=, ...)
subroutine parse(text, x)
  implicit none
  character(len=*), intent(in) :: text
  real(8), intent(inout) :: x
  integer :: ios
  read(text, *, iostat=ios, end=10) x
10 continue
end subroutine parse

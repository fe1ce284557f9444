! adjit-error: 7:9: unsupported Fortran: WRITE to `buf`, a unit other than `*` or 6 (file I/O) or a character variable (internal file I/O)
subroutine label(n, k)
  implicit none
  integer, intent(in) :: n
  integer, intent(out) :: k
  character(len=32) :: buf
  write(buf, '(a,i0)') 'step_', n
  k = len_trim(buf)
end subroutine label

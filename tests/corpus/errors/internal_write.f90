! adjit-error: 8:9: unsupported Fortran: WRITE to a deferred-length CHARACTER variable (`character(len=:)`); an internal file of constant or assumed length is supported
subroutine label(n, k)
  implicit none
  integer, intent(in) :: n
  integer, intent(out) :: k
  character(len=:), allocatable :: buf
  allocate(character(len=32) :: buf)
  write(buf, '(a,i0)') 'step_', n
  k = len_trim(buf)
end subroutine label

! adjit-error: 6:10: unsupported Fortran: a WHERE mask reading `w` at other elements than the one assigned
subroutine wmask(w, n)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: w(n)
  where (w > w(1)) w = 0d0
end subroutine

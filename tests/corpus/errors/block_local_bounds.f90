! adjit-error: 10:18: BLOCK array `w` takes its bounds from `m`, a local variable
! A BLOCK's automatic array sized by a local variable assigned before it
! (sized on entry to the BLOCK in Fortran): rejected, not sized at entry.
subroutine s(n, y)
  integer, intent(in) :: n
  real(8), intent(out) :: y
  integer :: m
  m = n - 2
  block
    real(8) :: w(m)
    w = 1.5d0
    y = sum(w)
  end block
end subroutine

! A WHERE mask reading a variable that an earlier assignment of the
! construct changes is rejected (Fortran evaluates the mask once).
! adjit-error: 7:10: WHERE mask reading `a`, assigned earlier in the construct
subroutine wm(a, b)
  implicit none
  double precision, intent(inout) :: a(4), b(4)
  where (a > 0)
    a = -a
    b = 1
  elsewhere (a < -1)
    b = 2
  end where
end subroutine wm

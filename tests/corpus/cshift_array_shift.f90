! CSHIFT and EOSHIFT with an array `shift=` (one shift per line along
! `dim`), of rank-2 arrays along either dimension.
! adjit-test: --entry drive --set m=1,2,3,4,5,6 --set k=1,-1,2
! adjit-test: --entry drive --set m=0.5,-1,2,1.5,-2.5,0.25 --set k=0,4,-2
module cshifta
  implicit none
contains
  subroutine drive(m, k, a, b, c)
    double precision, intent(in) :: m(2, 3)
    integer, intent(in) :: k(3)
    double precision, intent(out) :: a(2, 3), b(2, 3), c(2, 3)
    a = cshift(m, k, 1)*m
    b = cshift(m, k(1:2), dim=2) + m**2
    c = eoshift(m, k, dim=1)*2
  end subroutine drive
end module cshifta

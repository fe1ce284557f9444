! EOSHIFT with an array `boundary=` (rank of the array less one): each line
! along `dim` is filled at its vacated end by the boundary's element at
! the line's position; with an array `shift=` too, and in an expression.
! adjit-test: --entry drive --set m=0.5,-1,2,1.5,0.25,-2,3,1,-0.75,1.25,0.5,-1.5 --set b=10,20,30 --set c=-1,-2,-3,-4
! adjit-test: --entry drive --set m=1,2,3,4,5,6,7,8,9,10,11,12 --set b=0.5,-0.5,2 --set c=3,1,-1,0.25
subroutine drive(m, b, c, r1, r2, r3, s)
  implicit none
  double precision, intent(in) :: m(4, 3), b(3), c(4)
  double precision, intent(out) :: r1(4, 3), r2(4, 3), r3(4, 3), s
  r1 = eoshift(m, 1, b)
  r2 = eoshift(m, -1, boundary=c, dim=2)
  r3 = eoshift(m, [1, -2, 2], b * b, 1) * m
  s = sum(eoshift(m, 2, boundary=c + 1, dim=2) ** 2)
end subroutine drive

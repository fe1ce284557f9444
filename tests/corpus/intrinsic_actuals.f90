! Array-valued intrinsics as actual arguments of assumed-shape dummies:
! MATMUL, TRANSPOSE of a section, CSHIFT in an expression, RESHAPE (rank 2);
! each goes through a temporary of the intrinsic's shape.
! adjit-test: --entry drive --set a=1,2,3,4,5,6,7,8,9.5 --set x=1,-2,0.5
! adjit-test: --entry drive --set a=0.5,-1,2,1.5,0.25,-2,3,1,-0.75 --set x=2,0.25,-1
module iam
  implicit none
contains
  subroutine acc(v, s)
    double precision, intent(in) :: v(:)
    double precision, intent(out) :: s
    integer :: i
    s = 0
    do i = 1, size(v)
      s = s + i*v(i)**2
    end do
  end subroutine acc
  subroutine acc2(m, s)
    double precision, intent(in) :: m(:, :)
    double precision, intent(out) :: s
    integer :: i, j
    s = 0
    do j = 1, size(m, 2)
      do i = 1, size(m, 1)
        s = s + (i + 10*j)*m(i, j)
      end do
    end do
  end subroutine acc2
  subroutine drive(a, x, s)
    double precision, intent(in) :: a(3, 3), x(3)
    double precision, intent(out) :: s(4)
    call acc(matmul(a, x), s(1))
    call acc2(transpose(a(1:2, :)), s(2))
    call acc(cshift(x, 1) + 1, s(3))
    call acc2(reshape(x(1:2)*2, [1, 2]), s(4))
  end subroutine drive
end module iam

! Nested WHERE: constructs and statements inside WHERE and ELSEWHERE arms,
! with masked ELSEWHERE, under the masks of the arms they are nested in.
! adjit-test: --entry drive --set x=1,-2,3,-0.5,0.25,4 --set y=0.5,1,-3,2,-1,0.75
! adjit-test: --entry drive --set x=-1,2,0.5,1.5,-0.25,2 --set y=-2.5,0.5,-1,-3,1.5,2
module nwhere
  implicit none
contains
  subroutine drive(x, y, z, w)
    double precision, intent(in) :: x(6), y(6)
    double precision, intent(out) :: z(6), w(6)
    z = 0
    w = 1
    where (x > 0)
      z = x*y
      where (y > 0)
        w = sqrt(x) + y
      elsewhere (y < -2)
        w = -x
      elsewhere
        w = x*x*y
      end where
    elsewhere
      z = -x
      where (y > 0) w = y**2 + x
    end where
  end subroutine drive
end module nwhere

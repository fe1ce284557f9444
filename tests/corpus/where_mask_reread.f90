! WHERE / ELSEWHERE masks reading the variables the construct assigns:
! each mask is evaluated once, when its WHERE or ELSEWHERE statement is
! reached, so an ELSEWHERE arm does not see elements an earlier arm moved
! across its mask, a second assignment of an arm runs under the mask the
! first one changed, and a mask reading other elements (`cshift`)
! sees the values of the arms before it. Nested constructs too.
! adjit-test: --entry remask --set x=1.5,0.2,0.7,-1,3,0.4 --set c=0.5
! adjit-test: --entry remask --set x=-0.3,2.5,0.45,1.2,0.1,-2 --set c=1.25
module remasking
  implicit none
contains
  subroutine remask(x, c, y, z, w)
    double precision, intent(in) :: x(6), c
    double precision, intent(out) :: y(6), z(6), w(6)
    y = x
    z = 2*x
    w = x + c
    where (y > 1.0d0)
      y = y - 2.0d0
      z = z*y
    elsewhere (y < c)
      y = y*3.0d0 + c
      z = y*z
    elsewhere
      y = y + 10.0d0
    end where
    where (w > 1.0d0)
      w = w*0.25d0
      where (w > 0.5d0)
        w = w**2 + c
        z = z - w
      elsewhere (cshift(w, 1) > 0.3d0)
        w = sin(w)
      end where
    elsewhere (w + cshift(w, -1) > 0.5d0)
      w = w*c
    end where
  end subroutine remask
end module remasking

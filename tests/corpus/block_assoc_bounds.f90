! Arrays of a BLOCK sized by an ASSOCIATE name (`associate (m => n - 1)`
! then `block; real(dp) :: w(m)`) or by a local computed before the BLOCK,
! as a smoothing routine sizes its work arrays: differences of the data
! in one BLOCK, a second-difference stencil with a lower bound in another,
! a named BLOCK left early by EXIT, inside a loop over passes.
! adjit-test: --entry smooth_passes --set n=6 --set x=1,2.5,0.5,3,1.5,2 --set passes=3
! adjit-test: --entry smooth_passes --set n=4 --set x=-1,0.5,2,0.25 --set passes=2
module smoothing
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  subroutine smooth_once(x, roughness)
    real(dp), intent(inout) :: x(:)
    real(dp), intent(out) :: roughness
    associate (m => size(x) - 1)
      block
        real(dp) :: d(m)
        integer :: i
        do i = 1, m
          d(i) = x(i+1) - x(i)
        end do
        roughness = sum(d**2)/m
        x(2:m) = x(2:m) + 0.25_dp*(d(2:m) - d(1:m-1))
      end block
    end associate
  end subroutine smooth_once
end module smoothing

subroutine smooth_passes(n, x, passes, rough, curv, first_big)
  use smoothing
  implicit none
  integer, intent(in) :: n, passes
  real(dp), intent(inout) :: x(n)
  real(dp), intent(out) :: rough, curv
  integer, intent(out) :: first_big
  integer :: p, k, i
  curv = 0
  first_big = 0
  do p = 1, passes
    call smooth_once(x, rough)
    k = n - 2
    block
      real(dp) :: c(2:k+1)
      do i = 2, k + 1
        c(i) = x(i-1) - 2*x(i) + x(i+1)
      end do
      curv = curv + maxval(abs(c))*p
    end block
  end do
  scan: block
    do i = 1, n
      if (abs(x(i)) > 1.0_dp) then
        first_big = i
        exit scan
      end if
    end do
    first_big = -1
  end block scan
end subroutine smooth_passes

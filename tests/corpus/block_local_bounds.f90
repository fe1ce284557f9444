! Arrays of a BLOCK sized by a local variable of the procedure: sized on
! each entry to the BLOCK with the local's value then (a different size on
! each trip of the loop), one with a lower bound, and a BLOCK left early by
! CYCLE (entered again on the next trip).
! adjit-test: --entry block_local_bounds --set n=4 --set x=0.7
! adjit-test: --entry block_local_bounds --set n=2 --set x=-1.25
subroutine block_local_bounds(n, x, y, z)
  integer, intent(in) :: n
  real(8), intent(in) :: x
  real(8), intent(out) :: y, z
  integer :: m, i, k
  y = 0
  z = 1
  do k = 1, 3
    m = n - 2 + k
    block
      real(8) :: w(m), v(0:m - 1)
      do i = 1, m
        w(i) = x*i
        v(i - 1) = sin(x) + i
      end do
      z = z*(1 + x*w(m))
      if (k == 2) cycle
      y = y + sum(w*v) + size(w)
    end block
  end do
end subroutine

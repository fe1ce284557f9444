! BLOCK constructs whose variables reuse the names of variables of earlier,
! closed BLOCKs: each BLOCK has its own variable, even of another type or
! shape (`w` a work array in the first BLOCK, a scalar weight in the
! second; `k` an integer counter, then a REAL(8) gain; `s` twice). A
! nested BLOCK reuses a name of an earlier sibling of its enclosing BLOCK.
! adjit-test: --entry smooth_energy --set x=0.5,-1.25,2,0.75,1.5 --set alpha=0.3
! adjit-test: --entry smooth_energy --set x=1,2,3,4,5 --set alpha=1.7
module block_reuse_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  subroutine smooth_energy(x, alpha, e, stats)
    real(dp), intent(in) :: x(5), alpha
    real(dp), intent(out) :: e
    real(dp), intent(out) :: stats(3)
    integer :: i
    e = 0
    block
      ! A work array of neighbour differences and a counter.
      real(dp) :: w(4), s
      integer :: k
      k = 0
      do i = 1, 4
        w(i) = x(i + 1) - x(i)
        if (w(i) > 0) k = k + 1
      end do
      s = sum(w**2)
      e = e + alpha*s
      stats(1) = k
    end block
    block
      ! `w` is now a scalar weight, `k` a real gain, `s` again a sum.
      real(dp) :: w, k
      real(dp) :: s
      w = 1/(1 + alpha**2)
      k = 2*alpha
      s = 0
      do i = 1, 5
        s = s + w*sin(k*x(i))
      end do
      e = e + s
      stats(2) = s
      block
        real(dp) :: t
        t = w*k
        e = e*(1 + 0.1_dp*t)
      end block
      block
        ! Reuses the name of the sibling BLOCK just closed.
        real(dp) :: t(2)
        t = [x(1), x(5)]
        e = e + product(t)*w
      end block
    end block
    block
      integer :: k(2)
      real(dp) :: s
      k = [2, 4]
      s = x(k(1))*x(k(2))
      e = e + s
      stats(3) = s
    end block
  end subroutine smooth_energy
end module block_reuse_m

! Array-expression heavy data cleaning: WHERE / ELSEWHERE with masks,
! MERGE, PACK of the accepted samples into an ALLOCATABLE array, COUNT,
! masked SUM / MAXVAL, a robust (clipped) mean and variance, and an array
! constructor assigned to sections; the statistics are differentiated with
! respect to the samples.
! adjit-test: --entry robust_stats --set x=1.0,1.2,0.9,5.0,1.1,-3.0,0.95,1.05,1.3,0.8 --set clip=2.0
! adjit-test: --entry robust_stats --set x=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,9.0 --set clip=1.0
module masked_stats
  implicit none
  private
  public :: robust_stats
  integer, parameter :: dp = kind(1.0d0)
contains

  pure function median3(a, b, c) result(m)
    real(dp), intent(in) :: a, b, c
    real(dp) :: m
    m = max(min(a, b), min(max(a, b), c))
  end function median3

  subroutine robust_stats(x, clip, stats)
    real(dp), intent(in) :: x(10)
    real(dp), intent(in) :: clip
    real(dp), intent(out) :: stats(5)
    real(dp) :: dev(10), w(10), y(10), mu, sigma
    real(dp), allocatable :: kept(:)
    logical :: ok(10)
    integer :: nk
    mu = sum(x)/size(x)
    sigma = sqrt(sum((x - mu)**2)/(size(x) - 1))
    dev = abs(x - mu)/sigma
    ok = dev <= clip
    where (ok)
      w = 1.0_dp
      y = x
    elsewhere (dev <= 2.0_dp*clip)
      w = 0.5_dp
      y = mu + sign(clip*sigma, x - mu)
    elsewhere
      w = 0.0_dp
      y = mu
    end where
    nk = count(ok)
    kept = pack(x, ok)
    stats(1) = sum(w*y)/sum(w)
    stats(2) = sum(kept)/max(nk, 1)
    stats(3) = maxval(x, mask=ok) - minval(x, mask=ok)
    stats(4) = sum(merge(x**2, 0.0_dp, ok .and. x > 1.0_dp))
    stats(5) = median3(x(1), x(2), x(3))
    stats(4:5) = [stats(4), stats(5)]*0.5_dp
  end subroutine robust_stats
end module masked_stats

! Modern declarations and statements a statistics module uses: CONTIGUOUS
! assumed-shape dummies, a PROTECTED module variable set through its
! module, ALLOCATE without bounds taking those of SOURCE= / MOLD=, a
! logical array expression as an optional actual argument (`mask=x > 0`),
! SIZE and UBOUND of sections and expressions, WRITE with the
! minimal-width I0 and F0.d, and EXIT of a named BLOCK from inside a DO.
! adjit-test: --entry describe --set n=5 --set x=0.5,-1,2,3,1.5 --set s=0.5
! adjit-test: --entry describe --set n=6 --set x=-0.25,1,4,-2,0.75,2.5 --set s=2
module robust_stats
  implicit none
  private
  public :: dp, scale, set_scale, moments, scaled
  integer, parameter :: dp = kind(1.0d0)
  real(dp), protected :: scale = 1.0_dp
contains
  subroutine set_scale(s)
    real(dp), intent(in) :: s
    scale = s
  end subroutine set_scale

  elemental function scaled(x) result(y)
    real(dp), intent(in) :: x
    real(dp) :: y
    y = scale*x
  end function scaled

  subroutine moments(x, mean, sd, mask)
    real(dp), intent(in), contiguous :: x(:)
    real(dp), intent(out) :: mean, sd
    logical, intent(in), optional :: mask(:)
    integer :: n
    if (present(mask)) then
      n = count(mask)
      mean = sum(x, mask=mask)/max(n, 1)
      sd = sqrt(sum((x - mean)**2, mask=mask)/max(n - 1, 1))
    else
      n = size(x)
      mean = sum(x)/n
      sd = norm2(x - mean)/sqrt(real(max(n - 1, 1), dp))
    end if
  end subroutine moments
end module robust_stats

subroutine describe(n, x, s, r, first_negative)
  use robust_stats
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(n), s
  real(dp), intent(out) :: r(6)
  integer, intent(out) :: first_negative
  real(dp), allocatable :: w(:), z(:)
  real(dp) :: m, sd
  integer :: i
  call set_scale(s)
  allocate(w, source=scaled(x))
  allocate(z, mold=w)
  z = w**2
  call moments(z, m, sd)
  r(1) = m + sd
  call moments(x, m, sd, mask=x > 0)
  r(2) = m*sd
  call moments(w(2:n-1), m, sd, mask=abs(w(2:n-1)) < 1.4_dp)
  r(3) = m - sd + size(w(2:n-1)) + ubound(x(2:n:2), 1)
  r(4) = scale*size(z) + size(x - 1.0_dp, 1)
  r(5) = sum(z)
  find: block
    do i = 1, n
      if (x(i) < 0) then
        first_negative = i
        exit find
      end if
    end do
    first_negative = 0
  end block find
  r(6) = first_negative*s
  write(*, '(a,i0,a,f0.4,a,i0)') 'n=', n, ' mean=', r(1), ' neg=', first_negative
end subroutine describe

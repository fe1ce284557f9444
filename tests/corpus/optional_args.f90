! OPTIONAL arguments with PRESENT, keyword arguments in calls to module and
! internal procedures, an absent argument passed on to another OPTIONAL dummy.
! adjit-test: --entry driver --set a=1.25 --set b=0.5
! adjit-test: --entry driver --set a=-0.75 --set b=2
module opt_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
contains
  function weighted(x, w, shift) result(r)
    real(dp), intent(in) :: x
    real(dp), intent(in), optional :: w
    real(dp), intent(in), optional :: shift
    real(dp) :: r
    r = x*x
    if (present(w)) r = r*w
    if (present(shift)) r = r + shift
  end function weighted

  subroutine accumulate(s, x, scale, v)
    real(dp), intent(inout) :: s
    real(dp), intent(in) :: x
    real(dp), optional, intent(in) :: scale
    real(dp), optional, intent(in) :: v(3)
    s = s + weighted(x, w=scale)
    if (present(v)) s = s + sum(v)*x
  end subroutine accumulate
end module opt_m

subroutine driver(a, b, r1, r2, r3, s)
  use opt_m
  implicit none
  real(dp), intent(in) :: a, b
  real(dp), intent(out) :: r1, r2, r3, s
  real(dp) :: v(3)
  r1 = weighted(a)
  r2 = weighted(a, b)
  r3 = weighted(shift=b, x=a) + weighted(a, shift=1.0_dp, w=b)
  v = [a, b, a*b]
  s = 0
  call accumulate(s, a)
  call accumulate(s, b, 3.0_dp)
  call accumulate(x=a, s=s, v=v)
  s = s + inner(b) + inner(b, a)
contains
  real(dp) function inner(p, q)
    real(dp), intent(in) :: p
    real(dp), intent(in), optional :: q
    inner = sin(p)
    if (present(q)) inner = inner*q
  end function inner
end subroutine driver

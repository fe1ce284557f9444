! A C-interoperable kernel module: kinds from ISO_C_BINDING (c_double,
! c_int, c_int64_t, c_bool), BIND(C) procedures with and without NAME=,
! VALUE dummies, FINDLOC with DIM=, MASK= and BACK= picking the coefficients of a
! piecewise model whose value is differentiated.
! adjit-test: --entry blend --set x=0.5,1.25,-0.75,2.0 --set w=0.3
! adjit-test: --entry blend --set x=1.0,-2.0,3.0,-4.0 --set w=-1.1
module c_kernels
  use, intrinsic :: iso_c_binding, only: c_double, c_int, c_int64_t, c_bool
  implicit none
  private
  public :: blend, dp
  integer, parameter :: dp = c_double
  integer(c_int), parameter :: ntab = 6
  integer(c_int), parameter :: tags(ntab) = [3, 7, 3, 9, 7, 1]
  real(c_double), parameter :: coef(ntab) = [0.5_dp, 1.5_dp, -0.25_dp, 2.0_dp, 0.75_dp, -1.0_dp]
contains

  pure function first_tag(tag) result(k) bind(c, name='first_tag')
    integer(c_int), intent(in) :: tag
    integer(c_int) :: k
    k = findloc(tags, tag, dim=1)
  end function first_tag

  pure function last_tag(tag) result(k) bind(c)
    integer(c_int), intent(in) :: tag
    integer(c_int) :: k
    k = findloc(tags, tag, dim=1, back=.true.)
  end function last_tag

  ! VALUE dummies: the body changes its copies, never the caller's.
  function damped_sum(n, s, v) result(total) bind(c, name='damped_sum')
    integer(c_int), value :: n
    real(c_double), value :: s
    real(c_double), intent(in) :: v(*)
    real(c_double) :: total
    total = 0.0_dp
    do while (n > 0)
      total = total + s*v(n)
      s = 0.5_dp*s
      n = n - 1
    end do
  end function damped_sum

  subroutine blend(x, w, y) bind(c, name='c_blend')
    real(c_double), intent(inout) :: x(4)
    real(c_double), intent(in) :: w
    real(c_double), intent(out) :: y
    integer(c_int) :: i, k, m
    integer(c_int64_t) :: big
    logical(c_bool) :: pos(4)
    logical :: mask(ntab)
    integer :: where3(1)
    pos = x > 0.0_dp
    ! The first positive entry and the last negative one.
    i = findloc(pos, .true._c_bool, dim=1)
    m = findloc(pos, .false._c_bool, dim=1, back=.true.)
    mask = coef > 0.0_dp
    k = findloc(tags, 7, dim=1, mask=mask)
    where3 = findloc(tags, 3, back=.true.)
    big = int(first_tag(9_c_int), c_int64_t) * 1000000000_c_int64_t
    y = coef(first_tag(3_c_int)) * x(max(i, 1)) + coef(last_tag(7_c_int)) * w**2
    y = y + coef(k) * x(max(m, 1)) * w + real(where3(1), dp) * sin(x(2))
    y = y + real(big / 1000000000_c_int64_t, dp) * 1.0e-2_dp * x(4)**2
    if (findloc(tags, 42, dim=1) == 0) y = y + 0.125_dp * x(3)
    m = 3
    y = y + damped_sum(m, w, x) + real(m, dp) * w
    x(1) = x(1) * real(findloc(pos, .true._c_bool, dim=1, back=.true.), dp)
  end subroutine blend
end module c_kernels

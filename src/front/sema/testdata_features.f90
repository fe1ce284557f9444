module consts
  implicit none
  integer, parameter :: dp = kind(1.d0)
  integer, parameter :: sp = selected_real_kind(6)
  integer, parameter :: wp = selected_real_kind(12, 100)
  real(dp), parameter :: pi = 3.141592653589793_dp
  integer :: counter = 0
  real(wp) :: scale(3)
contains
  subroutine tick(n)
    integer, intent(in) :: n
    counter = counter + n
  end subroutine
  real(dp) function sq(x) result(r)
    real(dp), intent(in) :: x
    r = x*x
  end function
end module

subroutine features(n, a, b, out, ok, name)
  use consts, only: dp, sp, pi, tick, counter, sq, scale
  implicit none
  integer, intent(in) :: n
  real(dp), intent(inout) :: a(0:n, 2)
  real(dp) :: b(*)
  real(dp), intent(out) :: out(12)
  logical :: ok
  character(len=8) :: name
  real(dp) :: w(n), t
  integer :: i, j, k
  real(sp) :: s4
  integer, save :: calls
  integer :: tab(5)
  data tab /1, 2*3, 2*7/
  real(dp) :: f, u
  f(u) = 2*u + 1
  calls = calls + 1
  scale(1) = 0.5_dp
  do j = 1, 2
    do i = 0, n
      a(i, j) = i + 10*j
    end do
  end do
  w = a(1:n, 1) * 2
  out(1) = sum(w)
  out(2) = product(a(1:3, 2))
  out(3) = dot_product(w, b(1:n))
  out(4) = maxval(a) + minval(a(:, 2))
  out(5) = size(a) + size(a, 1) * 100 + lbound(a, 1) + ubound(a, 2) * 1000
  k = 0
  outer: do i = 1, 10
    do j = 1, 10
      if (j > i) cycle outer
      if (i*j > 20) exit outer
      k = k + 1
    end do
  end do outer
  out(6) = k
  out(7) = f(3.0_dp) + sq(pi) + counter
  call tick(5)
  out(8) = counter + tab(2) + tab(5) + calls
  s4 = 1.1
  out(9) = s4 + 1.1d0
  out(10) = sign(2.5_dp, -1.0_dp) + dim(5, 3) + modulo(-7, 3) + mod(-7, 3) &
    + nint(-2.5) + aint(-2.7_dp) + anint(2.5) + floor(-2.5) + ceiling(2.1)
  out(11) = max(1.0, 2.5, 3.0) + min(4.0_dp, 2.0_dp) + dmax1(1d0, 2d0) + amin1(2.0, 3.0) + max0(3, 9) &
    + iabs(-3) + abs(-2.5) + atan2(1.0_dp, 1.0_dp) + 2.0**3 + 2**10 + 2.0_dp**0.5_dp + 3.0**(-2)
  select case (n)
  case (:2)
    ok = .false.
  case (3, 4)
    ok = .true. .and. .not. (n == 3) .or. (n /= 4 .eqv. .true.)
  case default
    ok = .false.
  end select
  if (name(1:2) == 'FG') then
    name = 'NEW_X'
  else if (name == 'START') then
    name = 'FG'
  end if
  goto (101, 102) k - 13
  out(12) = -1
  goto 103
101 out(12) = 101
  goto 103
102 out(12) = 102
103 continue
end subroutine
program p
  use consts
  implicit none
  integer, parameter :: n = 4
  double precision a(0:n, 2), b(n), out(12)
  logical ok
  character(len=8) :: name
  integer i
  b = (/1d0, 2d0, 3d0, 4d0/)
  name = 'FGH'
  call features(n, a, b, out, ok, name)
  do i = 1, 12
    print '(es26.17)', out(i)
  end do
  print *, ok, name, counter
end

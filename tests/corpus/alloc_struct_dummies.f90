! ALLOCATABLE arrays of structures as dummy arguments of a particle
! library: an INTENT(OUT) one the callee allocates (`make`), one the
! callee reallocates to grow it keeping the values (`grow`, through a
! local work array), one passed on to a routine that allocates it
! (`reset` -> `make`), and one whose allocation the callee keeps
! (`kick`, with a lower bound of 0 from the caller).
! adjit-test: --entry f --set n=2 --set x=1,2
! adjit-test: --entry f --set n=4 --set x=0.5,-1,2.5,0.25
module swarm_m
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: particle
    real(dp) :: x(2)
    real(dp) :: m
    real(dp) :: v(2)
  end type
contains
  subroutine make(ps, n, s)
    type(particle), allocatable, intent(out) :: ps(:)
    integer, intent(in) :: n
    real(dp), intent(in) :: s
    integer :: i
    allocate(ps(n))
    do i = 1, n
      ps(i)%x = [s * i, s - i]
      ps(i)%v = 0
      ps(i)%m = s**2 + i
    end do
  end subroutine

  subroutine grow(ps, m, s)
    type(particle), allocatable, intent(inout) :: ps(:)
    integer, intent(in) :: m
    real(dp), intent(in) :: s
    type(particle), allocatable :: work(:)
    integer :: i, n
    n = size(ps)
    allocate(work(m))
    work(1:n) = ps(1:n)
    do i = n + 1, m
      work(i)%x = ps(n)%x * s
      work(i)%v = [s / i, -s / i]
      work(i)%m = ps(1)%m + i
    end do
    deallocate(ps)
    allocate(ps(m))
    ps = work
  end subroutine

  subroutine reset(ps, n, s)
    type(particle), allocatable, intent(inout) :: ps(:)
    integer, intent(in) :: n
    real(dp), intent(in) :: s
    call make(ps, n, s)
  end subroutine

  subroutine kick(ps, dv)
    type(particle), allocatable, intent(inout) :: ps(:)
    real(dp), intent(in) :: dv
    integer :: i
    do i = lbound(ps, 1), ubound(ps, 1)
      ps(i)%v = ps(i)%v + dv * ps(i)%x / ps(i)%m
      ps(i)%x = ps(i)%x + ps(i)%v
    end do
  end subroutine
end module

subroutine f(n, x, y, flags)
  use swarm_m
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(n)
  real(dp), intent(out) :: y(3)
  integer, intent(out) :: flags(4)
  type(particle), allocatable :: ps(:), qs(:)
  integer :: i
  call make(ps, n, x(1))
  do i = 1, n
    ps(i)%x(2) = ps(i)%x(2) + x(i)
  end do
  flags(1) = size(ps)
  call grow(ps, 2 * n, x(n))
  flags(2) = size(ps)
  call kick(ps, 0.5_dp)
  y(1) = sum(ps%m * ps%x(1)) + sum(ps%v(2))
  call reset(ps, n + 1, x(2))
  flags(3) = size(ps)
  allocate(qs(0:n-1))
  do i = 0, n - 1
    qs(i)%x = x(i+1)
    qs(i)%v = [1.0_dp, 2.0_dp]
    qs(i)%m = 2
  end do
  call kick(qs, x(1))
  flags(4) = lbound(qs, 1)
  y(2) = sum(ps%x(1) * ps%x(2))
  y(3) = sum(qs%x(1)) + qs(n-1)%v(2)
end subroutine

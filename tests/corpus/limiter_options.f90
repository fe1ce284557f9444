! String-keyed options the way configurable solvers take them: a flux
! limiter chosen by name through SELECT CASE (with a default and a
! case-insensitive match), an options derived type with defaults, a
! MUSCL-type reconstruction over a periodic grid using the chosen limiter,
! and one explicit upwind step; the update is differentiated with
! respect to the cell values and the CFL number.
! adjit-test: --entry advect --set u=0.0,0.2,0.9,1.0,0.7,0.1,0.0,0.3 --set cfl=0.4 --set which=1
! adjit-test: --entry advect --set u=1.0,0.8,0.5,0.45,0.6,0.2,0.1,0.9 --set cfl=0.6 --set which=3
module limiters
  implicit none
  private
  public :: advect
  integer, parameter :: dp = kind(1.0d0)

  type :: scheme_options
    character(len=16) :: limiter = 'minmod'
    real(dp) :: beta = 1.5_dp
    logical :: second_order = .true.
  end type scheme_options

contains

  pure function lower(s) result(t)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: t
    integer :: i, c
    t = s
    do i = 1, len(s)
      c = iachar(s(i:i))
      if (c >= iachar('A') .and. c <= iachar('Z')) t(i:i) = achar(c + 32)
    end do
  end function lower

  function limit(name, r, beta) result(phi)
    character(len=*), intent(in) :: name
    real(dp), intent(in) :: r, beta
    real(dp) :: phi
    select case (trim(lower(name)))
    case ('minmod')
      phi = max(0.0_dp, min(1.0_dp, r))
    case ('superbee')
      phi = max(0.0_dp, min(2.0_dp*r, 1.0_dp), min(r, 2.0_dp))
    case ('vanleer', 'van_leer')
      phi = (r + abs(r))/(1.0_dp + abs(r))
    case ('sweby')
      phi = max(0.0_dp, min(beta*r, 1.0_dp), min(r, beta))
    case default
      phi = 0.0_dp
    end select
  end function limit

  subroutine advect(u, cfl, which, unew)
    real(dp), intent(in) :: u(8)
    real(dp), intent(in) :: cfl
    integer, intent(in) :: which
    real(dp), intent(out) :: unew(8)
    type(scheme_options) :: opts
    real(dp) :: flux(8), du, dup, r, phi
    integer :: i, im, ip, n
    n = size(u)
    select case (which)
    case (1)
      opts%limiter = 'MinMod'
    case (2)
      opts%limiter = 'superbee'
    case (3)
      opts%limiter = 'Van_Leer'
    case (4)
      opts = scheme_options(limiter='sweby', beta=1.2_dp)
    case default
      opts%second_order = .false.
    end select
    do i = 1, n
      im = modulo(i - 2, n) + 1
      ip = modulo(i, n) + 1
      du = u(i) - u(im)
      dup = u(ip) - u(i)
      if (abs(dup) > 1.0e-12_dp) then
        r = du/dup
      else
        r = 0.0_dp
      end if
      phi = 0.0_dp
      if (opts%second_order) phi = limit(opts%limiter, r, opts%beta)
      flux(i) = u(i) + 0.5_dp*(1.0_dp - cfl)*phi*dup
    end do
    do i = 1, n
      im = modulo(i - 2, n) + 1
      unew(i) = u(i) - cfl*(flux(i) - flux(im))
    end do
  end subroutine advect
end module limiters

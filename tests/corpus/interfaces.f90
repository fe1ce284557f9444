! INTERFACE blocks: a generic name over module procedures resolved by type,
! kind and rank; explicit interfaces of external procedures (with IMPORT);
! a generic name over external procedures given by interface bodies.
! adjit-test: --entry use_generics --set x=1.5 --set n=4
! adjit-test: --entry use_generics --set x=-0.5 --set n=-2
module norms_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  interface mynorm
    module procedure norm_scalar, norm_vec
    module procedure norm_int
  end interface mynorm
  interface
    subroutine ext_axpy(a, x, y)
      import :: dp
      real(dp), intent(in) :: a, x
      real(dp), intent(inout) :: y
    end subroutine ext_axpy
  end interface
  interface twice
    real(dp) function twice_d(x)
      import dp
      real(dp), intent(in) :: x
    end function twice_d
    real function twice_s(x)
      real, intent(in) :: x
    end function twice_s
  end interface
contains
  real(dp) function norm_scalar(x)
    real(dp), intent(in) :: x
    norm_scalar = abs(x)
  end function norm_scalar
  real(dp) function norm_vec(v)
    real(dp), intent(in) :: v(:)
    norm_vec = sqrt(sum(v*v))
  end function norm_vec
  real(dp) function norm_int(n)
    integer, intent(in) :: n
    norm_int = real(abs(n), dp)
  end function norm_int
end module norms_m

subroutine ext_axpy(a, x, y)
  integer, parameter :: dp = kind(1.0d0)
  real(dp), intent(in) :: a, x
  real(dp), intent(inout) :: y
  y = y + a*x
end subroutine ext_axpy

real(8) function twice_d(x)
  real(8), intent(in) :: x
  twice_d = 2*x
end function twice_d

real function twice_s(x)
  real, intent(in) :: x
  twice_s = 2*x + 0.5
end function twice_s

subroutine use_generics(x, n, r1, r2, r3, y, t)
  use norms_m
  implicit none
  real(dp), intent(in) :: x
  integer, intent(in) :: n
  real(dp), intent(out) :: r1, r2, r3, y, t
  real(dp) :: v(3)
  real :: s
  v = [x, 2*x, 3.0_dp]
  r1 = mynorm(x)
  r2 = mynorm(v)
  r3 = mynorm(n) * x
  y = 1
  call ext_axpy(x, r2, y)
  call ext_axpy(y=y, x=x, a=r1)
  s = real(n)
  t = twice(x) + twice(s)
end subroutine use_generics

! adjit-error: 17:7: no specific procedure of the generic interface `g` matches
module m
  implicit none
  interface g
    module procedure g_real
  end interface g
contains
  double precision function g_real(x)
    double precision, intent(in) :: x
    g_real = x
  end function g_real
end module m
subroutine caller(n, r)
  use m
  integer n
  double precision r
  r = g(n)
end subroutine caller

! adjit-error: 12:8: `f` has no dummy argument `tol`
module m
  implicit none
contains
  subroutine f(x, eps)
    double precision x, eps
    x = x + eps
  end subroutine f
end module m
subroutine caller(a)
  use m
  call f(a, tol=1d-8)
end subroutine caller

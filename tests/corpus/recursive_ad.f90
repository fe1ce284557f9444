! RECURSIVE procedures differentiated: a recursive power (a product of n
! factors), a binary-splitting product and sum over an array section,
! mutual recursion (even/odd Taylor terms of cosh), and a recursive
! function whose branch depends on the depth.
! adjit-test: --entry power --set x=1.5 --set n=5
! adjit-test: --entry split_prod --set a=1.1,0.9,1.3,0.7,1.2,0.8,1.05 --set n=7
! adjit-test: --entry split_sum --set a=0.5,-1.25,2,0.75,-0.5,1.5 --set n=6
! adjit-test: --entry cosh_series --set x=0.7 --set n=9
! adjit-test: --entry depth_branch --set x=0.8 --set n=6
module recursion
  implicit none
contains
  recursive subroutine even_terms(x, k, n, s)
    double precision, intent(in) :: x
    integer, intent(in) :: k, n
    double precision, intent(inout) :: s
    double precision :: t
    integer :: j
    t = 1.0d0
    do j = 1, k
      t = t * x / j
    end do
    s = s + t
    if (k + 1 <= n) call odd_terms(x, k + 1, n, s)
  end subroutine even_terms

  recursive subroutine odd_terms(x, k, n, s)
    double precision, intent(in) :: x
    integer, intent(in) :: k, n
    double precision, intent(inout) :: s
    ! odd powers do not belong to cosh: skip to the next even term
    if (k + 1 <= n) call even_terms(x, k + 1, n, s)
  end subroutine odd_terms
end module recursion

recursive subroutine power(x, n, r)
  implicit none
  double precision, intent(in) :: x
  integer, intent(in) :: n
  double precision, intent(out) :: r
  double precision :: t
  if (n <= 0) then
    r = 1.0d0
  else
    call power(x, n - 1, t)
    r = t * x
  end if
end subroutine power

recursive function prod_range(a, lo, hi) result(p)
  implicit none
  double precision, intent(in) :: a(*)
  integer, intent(in) :: lo, hi
  double precision :: p
  integer :: mid
  if (lo == hi) then
    p = a(lo)
  else
    mid = (lo + hi) / 2
    p = prod_range(a, lo, mid) * prod_range(a, mid + 1, hi)
  end if
end function prod_range

subroutine split_prod(a, n, p)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: p
  double precision, external :: prod_range
  p = prod_range(a, 1, n)
end subroutine split_prod

recursive subroutine sum_range(a, lo, hi, s)
  implicit none
  double precision, intent(in) :: a(*)
  integer, intent(in) :: lo, hi
  double precision, intent(out) :: s
  double precision :: left, right
  integer :: mid
  if (lo == hi) then
    s = a(lo) * a(lo)
  else
    mid = (lo + hi) / 2
    call sum_range(a, lo, mid, left)
    call sum_range(a, mid + 1, hi, right)
    s = left + sin(right)
  end if
end subroutine sum_range

subroutine split_sum(a, n, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: s
  call sum_range(a, 1, n, s)
end subroutine split_sum

subroutine cosh_series(x, n, s)
  use recursion
  implicit none
  double precision, intent(in) :: x
  integer, intent(in) :: n
  double precision, intent(out) :: s
  s = 0.0d0
  call even_terms(x, 0, n, s)
end subroutine cosh_series

recursive function depth_fn(x, d) result(y)
  implicit none
  double precision, intent(in) :: x
  integer, intent(in) :: d
  double precision :: y
  if (d <= 0) then
    y = x
  else if (mod(d, 2) == 0) then
    y = exp(0.5d0 * depth_fn(x, d - 1))
  else
    y = depth_fn(x, d - 1)**2 - 1.0d0
  end if
end function depth_fn

subroutine depth_branch(x, n, y)
  implicit none
  double precision, intent(in) :: x
  integer, intent(in) :: n
  double precision, intent(out) :: y
  double precision, external :: depth_fn
  y = depth_fn(x, n)
end subroutine depth_branch

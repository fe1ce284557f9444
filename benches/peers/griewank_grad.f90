! Hand-written gradient of Griewank's function, the peer for adjit's
! adjoint: c = 1 + sum a(i)**2/400 - prod cos(a(i)/sqrt(i)).
subroutine griewank_grad(s, a, c, g)
  implicit none
  integer, intent(in) :: s
  double precision, intent(in) :: a(s)
  double precision, intent(out) :: c, g(s)
  double precision d, ci, r
  integer i
  ! Forward: the product and each factor's logarithmic derivative.
  c = 1
  d = 1
  do i = 1, s
    r = 1 / sqrt(dble(i))
    ci = cos(a(i)*r)
    c = c + a(i)**2/400
    d = d*ci
    g(i) = ci
  end do
  c = c - d
  ! d(prod)/da(i) = prod_{j/=i} cos_j * (-sin_i r_i), computed with prefix and
  ! suffix products so that zero factors are handled.
  call prefix_suffix(s, a, g)
contains
  subroutine prefix_suffix(s, a, g)
    integer, intent(in) :: s
    double precision, intent(in) :: a(s)
    double precision, intent(inout) :: g(s)
    double precision pre, suf, r, gi
    integer i
    pre = 1
    do i = 1, s
      gi = g(i)
      g(i) = pre
      pre = pre*gi
    end do
    suf = 1
    do i = s, 1, -1
      r = 1 / sqrt(dble(i))
      gi = cos(a(i)*r)
      g(i) = a(i)/200 + g(i)*suf*sin(a(i)*r)*r
      suf = suf*gi
    end do
  end subroutine prefix_suffix
end subroutine griewank_grad

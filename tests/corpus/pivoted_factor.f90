! A small dense linear-algebra module: LU with scaled partial pivoting
! (row swaps through a section assignment, an INFO flag), the solve with
! its pivots, the determinant from the factors, and a Cholesky with
! diagonal pivoting (LAPACK dpstrf's idea) that stops at the numerical
! rank. Assumed-shape INTENT(INOUT) arrays, an optional tolerance and
! swaps with a temporary row.
! adjit-test: --entry factor_demo --set n=4 --set a=4,1,2,0.5,1,5,1,1,2,1,6,1.5,0.5,1,1.5,3 --set b=1,2,3,4
! adjit-test: --entry factor_demo --set n=3 --set a=0.5,3,1,2,1,4,3,2,1 --set b=-1,0.5,2
module dense_linalg
  implicit none
  private
  public :: lu_factor, lu_solve, lu_det, pivoted_cholesky
  integer, parameter :: dp = kind(1.0d0)

contains

  subroutine lu_factor(a, ipiv, info)
    real(dp), intent(inout) :: a(:, :)
    integer, intent(out) :: ipiv(:)
    integer, intent(out) :: info
    real(dp) :: scale(size(a, 1)), row(size(a, 2))
    integer :: n, k, p, i
    n = size(a, 1)
    info = 0
    do i = 1, n
      scale(i) = maxval(abs(a(i, :)))
      if (scale(i) == 0.0_dp) then
        info = i
        return
      end if
    end do
    do k = 1, n
      p = k - 1 + maxloc(abs(a(k:n, k))/scale(k:n), dim=1)
      ipiv(k) = p
      if (a(p, k) == 0.0_dp) then
        info = k
        return
      end if
      if (p /= k) then
        row = a(k, :)
        a(k, :) = a(p, :)
        a(p, :) = row
        scale([k, p]) = scale([p, k])
      end if
      a(k+1:n, k) = a(k+1:n, k)/a(k, k)
      do i = k + 1, n
        a(i, k+1:n) = a(i, k+1:n) - a(i, k)*a(k, k+1:n)
      end do
    end do
  end subroutine lu_factor

  subroutine lu_solve(a, ipiv, b)
    real(dp), intent(in) :: a(:, :)
    integer, intent(in) :: ipiv(:)
    real(dp), intent(inout) :: b(:)
    integer :: n, k
    real(dp) :: s
    n = size(b)
    do k = 1, n
      if (ipiv(k) /= k) then
        s = b(k)
        b(k) = b(ipiv(k))
        b(ipiv(k)) = s
      end if
    end do
    do k = 2, n
      b(k) = b(k) - dot_product(a(k, 1:k-1), b(1:k-1))
    end do
    do k = n, 1, -1
      b(k) = (b(k) - dot_product(a(k, k+1:n), b(k+1:n)))/a(k, k)
    end do
  end subroutine lu_solve

  pure function lu_det(a, ipiv) result(d)
    real(dp), intent(in) :: a(:, :)
    integer, intent(in) :: ipiv(:)
    real(dp) :: d
    integer :: k
    d = 1.0_dp
    do k = 1, size(ipiv)
      d = d*a(k, k)
      if (ipiv(k) /= k) d = -d
    end do
  end function lu_det

  subroutine pivoted_cholesky(a, piv, rank, tol)
    real(dp), intent(inout) :: a(:, :)
    integer, intent(out) :: piv(:)
    integer, intent(out) :: rank
    real(dp), intent(in), optional :: tol
    real(dp) :: eps, tmp(size(a, 1)), dmax, t
    integer :: n, j, p, i
    n = size(a, 1)
    eps = 1.0e-12_dp
    if (present(tol)) eps = tol
    piv = [(i, i = 1, n)]
    rank = n
    do j = 1, n
      p = j - 1 + maxloc([(a(i, i), i = j, n)], dim=1)
      dmax = a(p, p)
      if (dmax <= eps) then
        rank = j - 1
        exit
      end if
      if (p /= j) then
        tmp = a(:, j)
        a(:, j) = a(:, p)
        a(:, p) = tmp
        tmp = a(j, :)
        a(j, :) = a(p, :)
        a(p, :) = tmp
        i = piv(j)
        piv(j) = piv(p)
        piv(p) = i
      end if
      a(j, j) = sqrt(a(j, j))
      a(j+1:n, j) = a(j+1:n, j)/a(j, j)
      do i = j + 1, n
        t = a(i, j)
        a(i:n, i) = a(i:n, i) - t*a(i:n, j)
      end do
    end do
  end subroutine pivoted_cholesky

end module dense_linalg

subroutine factor_demo(n, a, b, x, det, chol_diag, rank, info)
  use dense_linalg
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, intent(in) :: n
  real(dp), intent(in) :: a(n, n), b(n)
  real(dp), intent(out) :: x(n), det, chol_diag(n)
  integer, intent(out) :: rank, info
  real(dp) :: lu(n, n), spd(n, n)
  integer :: ipiv(n), piv(n), k
  lu = a
  call lu_factor(lu, ipiv, info)
  x = b
  if (info == 0) then
    call lu_solve(lu, ipiv, x)
    det = lu_det(lu, ipiv)
  else
    det = 0
  end if
  spd = matmul(transpose(a), a)
  call pivoted_cholesky(spd, piv, rank, tol=1.0e-10_dp)
  chol_diag = [(spd(k, k), k = 1, n)]
end subroutine factor_demo

! A compressed-sparse-row matrix type with ALLOCATABLE components, built
! from a dense array by counting its nonzeros, a matrix-vector product
! function, damped Jacobi sweeps and a conjugate-gradient solver with a
! relative-residual stopping test (named DO, EXIT); the driver (TARGET
! attributes, no POINTER) assembles a
! variable-coefficient diffusion operator, and the solution is
! differentiated with respect to the coefficients and the load.
! adjit-test: --entry diffuse --set kappa=1.0,1.5,0.8,1.2,2.0,0.9,1.1 --set load=1.0,0.5,-0.25,0.75,1.25,0.1
! adjit-test: --entry diffuse --set kappa=0.6,0.9,1.4,1.0,0.7,1.3,2.2 --set load=-0.3,0.8,1.0,0.2,-0.6,0.4
module sparse_kinds
  use, intrinsic :: iso_fortran_env, only: real64
  implicit none
  integer, parameter :: wp = real64
end module sparse_kinds

module csr_matrices
  use sparse_kinds
  implicit none
  private
  public :: csr_matrix, csr_from_dense, csr_matvec, csr_diagonal

  type :: csr_matrix
    integer :: nrows = 0
    integer :: nnz = 0
    integer, allocatable :: row_ptr(:)
    integer, allocatable :: col_idx(:)
    real(wp), allocatable :: values(:)
  end type csr_matrix

contains

  !> The CSR form of the dense n x n matrix `dense`, dropping entries with
  !> magnitude at most `drop_tol` (default 0).
  subroutine csr_from_dense(n, dense, a, drop_tol)
    integer, intent(in) :: n
    real(wp), intent(in) :: dense(n, n)
    type(csr_matrix), intent(out) :: a
    real(wp), intent(in), optional :: drop_tol
    real(wp) :: tol
    integer :: i, j, k
    tol = 0.0_wp
    if (present(drop_tol)) tol = drop_tol
    a%nrows = n
    a%nnz = count(abs(dense) > tol)
    allocate(a%row_ptr(n + 1), a%col_idx(a%nnz), a%values(a%nnz))
    k = 0
    a%row_ptr(1) = 1
    do i = 1, n
      do j = 1, n
        if (abs(dense(i, j)) > tol) then
          k = k + 1
          a%col_idx(k) = j
          a%values(k) = dense(i, j)
        end if
      end do
      a%row_ptr(i + 1) = k + 1
    end do
  end subroutine csr_from_dense

  !> y = A x.
  function csr_matvec(a, x) result(y)
    type(csr_matrix), intent(in) :: a
    real(wp), intent(in) :: x(:)
    real(wp) :: y(size(x))
    integer :: i, k
    do i = 1, a%nrows
      y(i) = 0.0_wp
      do k = a%row_ptr(i), a%row_ptr(i + 1) - 1
        y(i) = y(i) + a%values(k) * x(a%col_idx(k))
      end do
    end do
  end function csr_matvec

  !> The diagonal of A (zero where it is not stored).
  subroutine csr_diagonal(a, d)
    type(csr_matrix), intent(in) :: a
    real(wp), intent(out) :: d(:)
    integer :: i, k
    d = 0.0_wp
    do i = 1, a%nrows
      do k = a%row_ptr(i), a%row_ptr(i + 1) - 1
        if (a%col_idx(k) == i) d(i) = a%values(k)
      end do
    end do
  end subroutine csr_diagonal
end module csr_matrices

module krylov
  use sparse_kinds
  use csr_matrices
  implicit none
contains
  !> `sweeps` damped Jacobi iterations on A x = b from x.
  subroutine jacobi(a, b, x, sweeps, omega)
    type(csr_matrix), intent(in) :: a
    real(wp), intent(in) :: b(:), omega
    real(wp), intent(inout) :: x(:)
    integer, intent(in) :: sweeps
    real(wp) :: d(size(b))
    integer :: s
    call csr_diagonal(a, d)
    do s = 1, sweeps
      x = x + omega * (b - csr_matvec(a, x)) / d
    end do
  end subroutine jacobi

  !> Conjugate gradients on A x = b from x, until the residual norm falls
  !> below rtol times that of b or after max_iter steps.
  subroutine conjugate_gradient(a, b, x, rtol, max_iter, iters)
    type(csr_matrix), intent(in) :: a
    real(wp), intent(in) :: b(:), rtol
    real(wp), intent(inout) :: x(:)
    integer, intent(in) :: max_iter
    integer, intent(out) :: iters
    real(wp), dimension(size(b)) :: r, p, q
    real(wp) :: rho, rho_old, alpha, bnorm
    integer :: it
    r = b - csr_matvec(a, x)
    p = r
    rho = dot_product(r, r)
    bnorm = norm2(b)
    iters = 0
    cg: do it = 1, max_iter
      q = csr_matvec(a, p)
      alpha = rho / dot_product(p, q)
      x = x + alpha * p
      r = r - alpha * q
      rho_old = rho
      rho = dot_product(r, r)
      iters = it
      if (sqrt(rho) <= rtol * bnorm) exit cg
      p = r + (rho / rho_old) * p
    end do cg
  end subroutine conjugate_gradient
end module krylov

subroutine diffuse(kappa, load, u, u_jacobi, iters, nnz)
  use sparse_kinds
  use csr_matrices
  use krylov
  implicit none
  real(wp), intent(in) :: kappa(7), load(6)
  real(wp), intent(out) :: u(6), u_jacobi(6)
  integer, intent(out) :: iters, nnz
  real(wp), target :: dense(6, 6)
  type(csr_matrix), target :: a
  integer :: i
  dense = 0.0_wp
  do i = 1, 6
    dense(i, i) = kappa(i) + kappa(i + 1)
    if (i > 1) dense(i, i - 1) = -kappa(i)
    if (i < 6) dense(i, i + 1) = -kappa(i + 1)
  end do
  call csr_from_dense(6, dense, a)
  nnz = a%nnz
  u = 0.0_wp
  call conjugate_gradient(a, load, u, 1.0e-10_wp, 20, iters)
  u_jacobi = 0.0_wp
  call jacobi(a, load, u_jacobi, 4, 0.8_wp)
end subroutine diffuse

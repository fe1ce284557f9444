! Levenberg-Marquardt fit of a two-exponential decay model in a module:
! the residual and its Jacobian, a damped normal-equations step solved by
! Cholesky, an optional damping schedule and iteration limit, and a
! derived-type report of the fit (iterations, final cost, accepted steps).
! adjit-test: --entry fit_biexp --set t=0,0.5,1,1.5,2,3,4,5 --set y=3.0,2.1,1.55,1.2,0.95,0.66,0.49,0.37 --set p0=2,1.5,1,0.2
! adjit-test: --entry fit_biexp --set t=0,0.25,0.5,1,2,3,4,6 --set y=1.9,1.6,1.38,1.05,0.7,0.5,0.38,0.22 --set p0=1,1,0.5,0.1
module lm_solver
  implicit none
  private
  public :: lm_report, lm_minimize, model_residual
  integer, parameter :: dp = kind(1.0d0)

  type lm_report
    integer :: iterations = 0
    integer :: accepted = 0
    real(dp) :: cost = 0
    real(dp) :: lambda = 0
    logical :: converged = .false.
  end type lm_report

contains

  pure subroutine model_residual(p, t, y, r, jac)
    real(dp), intent(in) :: p(:), t(:), y(:)
    real(dp), intent(out) :: r(:)
    real(dp), intent(out), optional :: jac(:, :)
    integer :: i
    real(dp) :: e1, e2
    do i = 1, size(t)
      e1 = exp(-p(2)*t(i))
      e2 = exp(-p(4)*t(i))
      r(i) = p(1)*e1 + p(3)*e2 - y(i)
      if (present(jac)) then
        jac(i, 1) = e1
        jac(i, 2) = -p(1)*t(i)*e1
        jac(i, 3) = e2
        jac(i, 4) = -p(3)*t(i)*e2
      end if
    end do
  end subroutine model_residual

  subroutine cholesky_solve(a, b, ok)
    real(dp), intent(inout) :: a(:, :)
    real(dp), intent(inout) :: b(:)
    logical, intent(out) :: ok
    integer :: j, k, n
    n = size(b)
    ok = .true.
    do j = 1, n
      a(j, j) = a(j, j) - dot_product(a(j, 1:j-1), a(j, 1:j-1))
      if (a(j, j) <= 0.0_dp) then
        ok = .false.
        return
      end if
      a(j, j) = sqrt(a(j, j))
      do k = j + 1, n
        a(k, j) = (a(k, j) - dot_product(a(k, 1:j-1), a(j, 1:j-1)))/a(j, j)
      end do
    end do
    do j = 1, n
      b(j) = (b(j) - dot_product(a(j, 1:j-1), b(1:j-1)))/a(j, j)
    end do
    do j = n, 1, -1
      b(j) = (b(j) - dot_product(a(j+1:n, j), b(j+1:n)))/a(j, j)
    end do
  end subroutine cholesky_solve

  subroutine lm_minimize(p, t, y, report, max_iter, lambda0)
    real(dp), intent(inout) :: p(:)
    real(dp), intent(in) :: t(:), y(:)
    type(lm_report), intent(out) :: report
    integer, intent(in), optional :: max_iter
    real(dp), intent(in), optional :: lambda0
    real(dp) :: r(size(t)), rtrial(size(t)), jac(size(t), size(p))
    real(dp) :: a(size(p), size(p)), g(size(p)), step(size(p)), trial(size(p))
    real(dp) :: lambda, cost, cost_trial
    integer :: iter, limit, i
    logical :: ok

    limit = 25
    if (present(max_iter)) limit = max_iter
    lambda = 1.0e-2_dp
    if (present(lambda0)) lambda = lambda0

    call model_residual(p, t, y, r, jac)
    cost = 0.5_dp*sum(r**2)
    iterate: do iter = 1, limit
      report%iterations = iter
      g = matmul(transpose(jac), r)
      a = matmul(transpose(jac), jac)
      do i = 1, size(p)
        a(i, i) = a(i, i)*(1.0_dp + lambda)
      end do
      step = -g
      call cholesky_solve(a, step, ok)
      if (.not. ok) then
        lambda = lambda*10.0_dp
        cycle iterate
      end if
      trial = p + step
      call model_residual(trial, t, y, rtrial)
      cost_trial = 0.5_dp*sum(rtrial**2)
      if (cost_trial < cost) then
        report%accepted = report%accepted + 1
        if (cost - cost_trial < 1.0e-14_dp*(1.0_dp + cost)) then
          p = trial
          cost = cost_trial
          report%converged = .true.
          exit iterate
        end if
        p = trial
        cost = cost_trial
        lambda = max(lambda/3.0_dp, 1.0e-12_dp)
        call model_residual(p, t, y, r, jac)
      else
        lambda = lambda*4.0_dp
      end if
    end do iterate
    report%cost = cost
    report%lambda = lambda
  end subroutine lm_minimize

end module lm_solver

subroutine fit_biexp(t, y, p0, p, cost, iterations, accepted)
  use lm_solver
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(dp), intent(in) :: t(8), y(8), p0(4)
  real(dp), intent(out) :: p(4), cost
  integer, intent(out) :: iterations, accepted
  type(lm_report) :: rep
  p = p0
  call lm_minimize(p, t, y, rep, max_iter=12)
  cost = rep%cost
  iterations = rep%iterations
  accepted = rep%accepted
end subroutine fit_biexp

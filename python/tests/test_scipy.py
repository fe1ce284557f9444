"""The README's SciPy examples: L-BFGS-B on a Fortran objective with its
adjoint gradient, to convergence, and least_squares with a Fortran
Jacobian."""

import numpy as np
import pytest
from scipy.optimize import least_squares, minimize

import adjit

ROSENBROCK = """
subroutine rosenbrock(n, x, f)
  integer n
  double precision x(n), f
  integer i
  f = 0
  do i = 1, n - 1
    f = f + 100*(x(i+1) - x(i)**2)**2 + (1 - x(i))**2
  end do
end subroutine
"""

DECAY = """
! Residuals of a two-exponential decay model against measurements y(t).
subroutine decay(m, t, y, p, r)
  integer m
  double precision t(m), y(m), p(4), r(m)
  integer i
  do i = 1, m
    r(i) = p(1)*exp(-p(2)*t(i)) + p(3)*exp(-p(4)*t(i)) - y(i)
  end do
end subroutine
"""


def test_lbfgsb_converges_on_a_fortran_objective():
    p = adjit.compile(ROSENBROCK)
    n = 10
    fun, jac = p.objective("f", "x", n=n)
    x0 = np.full(n, -1.2)
    x0[1::2] = 1.0
    res = minimize(fun, x0, jac=jac, method="L-BFGS-B",
                   options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000})
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.ones(n), atol=1e-5)
    assert res.fun < 1e-10
    # the gradient at the solution is flat and agrees with differences
    g = jac(res.x)
    assert np.linalg.norm(g) < 1e-4
    h = 1e-6
    e = np.eye(n)
    fd = np.array([(fun(x0 + h * e[k]) - fun(x0 - h * e[k])) / (2 * h) for k in range(n)])
    np.testing.assert_allclose(jac(x0), fd, rtol=1e-6)


def test_objective_layout_and_starting_point():
    p = adjit.compile(DECAY)
    t = np.linspace(0, 4, 5)
    obj = p.objective("r", "p", m=5, t=t, y=np.zeros(5), p=[1.0, 2.0, 3.0, 4.0])
    assert not obj.scalar and obj.size == 4
    np.testing.assert_array_equal(obj.x0, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(obj.unpack(obj.x0)["t"], t)
    with pytest.raises(ValueError, match="whole arguments"):
        p.objective("r(1)", "p", m=5)


def test_least_squares_with_a_fortran_jacobian():
    p = adjit.compile(DECAY)
    truth = np.array([2.0, 1.3, 0.5, 0.1])
    t = np.linspace(0, 8, 40)
    y = truth[0] * np.exp(-truth[1] * t) + truth[2] * np.exp(-truth[3] * t)
    y = y + 1e-4 * np.sin(17 * t)  # slight, deterministic noise
    obj = p.objective("r", "p", m=t.size, t=t, y=y)
    # the Jacobian against finite differences
    x0 = np.array([1.0, 1.0, 1.0, 0.2])
    J = obj.jac(x0)
    assert J.shape == (40, 4)
    h = 1e-7
    fd = np.stack([(obj.fun(x0 + h * e) - obj.fun(x0 - h * e)) / (2 * h) for e in np.eye(4)],
                  axis=1)
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-8)
    res = least_squares(obj.fun, x0, jac=obj.jac, method="lm", xtol=1e-14, ftol=1e-14)
    assert res.success
    np.testing.assert_allclose(res.x, truth, rtol=2e-3)
    with_fd = least_squares(obj.fun, x0, jac="2-point", method="lm", xtol=1e-14, ftol=1e-14)
    np.testing.assert_allclose(res.x, with_fd.x, rtol=1e-6)
    assert res.njev <= with_fd.nfev

"""Gradients and Jacobians from Python: against analytic values, against
finite differences, tangent against adjoint, and against the command line
(the same engine, so the same bits)."""

import json
import pickle

import numpy as np
import pytest

import adjit
from conftest import BRATU_PRM, BRATU_X, EXAMPLES, central_differences


def griewank_value(a):
    i = np.arange(1, a.size + 1)
    return 1 + np.sum(a**2) / 400 - np.prod(np.cos(a / np.sqrt(i)))


def griewank_gradient(a):
    i = np.arange(1, a.size + 1)
    cos = np.cos(a / np.sqrt(i))
    # d/da_k prod(cos) = -sin(a_k/sqrt(k))/sqrt(k) * prod_{j != k} cos_j
    others = np.array([np.prod(np.delete(cos, k)) for k in range(a.size)])
    return a / 200 + np.sin(a / np.sqrt(i)) / np.sqrt(i) * others


@pytest.mark.parametrize("n", [5, 1000])
def test_griewank_gradient_three_ways(griewank, n):
    rng = np.random.default_rng(n)
    a = rng.uniform(-3, 3, n)
    value, g = griewank.grad("c", "a", s=n, a=a)
    assert value == pytest.approx(griewank_value(a), rel=1e-14)
    # analytic
    np.testing.assert_allclose(g["a"], griewank_gradient(a), rtol=1e-12, atol=1e-15)
    # tangent against adjoint, entry by entry
    _, gt = griewank.grad("c", "a", "tangent", s=n, a=a)
    np.testing.assert_allclose(gt["a"], g["a"], rtol=1e-13, atol=1e-16)
    # dot product: <tangent Jacobian v, u> == <u, adjoint Jacobian> v
    v = rng.standard_normal(n)
    assert np.dot(gt["a"], v) == pytest.approx(np.dot(g["a"], v), rel=1e-13, abs=1e-15)
    if n <= 5:
        # finite differences of the primal run from Python
        fd = central_differences(lambda x: griewank.run(s=n, a=x)["c"], a)[0]
        np.testing.assert_allclose(g["a"], fd, rtol=1e-7, atol=1e-9)
        _, gfd = griewank.grad("c", "a", "fd", s=n, a=a)
        np.testing.assert_allclose(gfd["a"], g["a"], rtol=1e-7, atol=1e-9)


def test_gradient_matches_the_command_line(griewank, cli, tmp_path):
    a = np.random.default_rng(7).uniform(-2, 2, 6)
    inputs = tmp_path / "in.json"
    inputs.write_text(json.dumps({"s": 6, "a": a.tolist()}))
    expected = cli("grad", EXAMPLES / "griewank.f90", "--of", "c", "--wrt", "a",
                   "--input", inputs)
    value, g = griewank.grad("c", "a", s=6, a=a)
    assert value == expected["value"]
    assert g["a"].tolist() == expected["gradient"]["a"]


@pytest.mark.parametrize("mode", ["adjoint", "tangent"])
def test_bratu_jacobian_matches_the_command_line(bratu, cli, mode):
    expected = cli("jacobian", EXAMPLES / "bratu.f", "--of", "f", "--wrt", "x,prm",
                   "--mode", mode, "--set", "dim=7", "--set", "parmax=2",
                   "--set", "x=" + ",".join(map(repr, BRATU_X.tolist())),
                   "--set", "prm=" + ",".join(map(repr, BRATU_PRM.tolist())))
    J = bratu.jacobian("f", ["x", "prm"], mode, dim=7, parmax=2, x=BRATU_X, prm=BRATU_PRM)
    assert J.shape == (expected["rows"], expected["cols"]) == (7, 9)
    np.testing.assert_array_equal(J, np.array(expected["matrix"]))


def test_bratu_jacobian_tangent_adjoint_and_differences(bratu):
    args = dict(dim=7, parmax=2, x=BRATU_X, prm=BRATU_PRM)
    Ja = bratu.jacobian("f", "x,prm", "adjoint", **args)
    Jt = bratu.jacobian("f", "x,prm", "tangent", **args)
    np.testing.assert_allclose(Jt, Ja, rtol=1e-13, atol=1e-14)
    rng = np.random.default_rng(3)
    u, v = rng.standard_normal(7), rng.standard_normal(9)
    assert u @ (Jt @ v) == pytest.approx((u @ Ja) @ v, rel=1e-13)

    def f(z):
        return bratu.run(dim=7, parmax=2, x=z[:7], prm=z[7:])["f"]

    fd = central_differences(f, np.concatenate([BRATU_X, BRATU_PRM]))
    np.testing.assert_allclose(Ja, fd, rtol=1e-6, atol=1e-7)
    # `auto` picks the adjoint for 7 rows and 9 columns: the same bits
    np.testing.assert_array_equal(bratu.jacobian("f", ["x", "prm"], **args), Ja)


def test_bratu_analytic_entries(bratu):
    # dF(1)/dx(1) = -2 + h^2 prm1/12 * 10 e^{u} u' with u = x/(1 + p2 x),
    # u' = 1/(1 + p2 x)^2 (h = 2.0/(dim+1) in single precision, as written)
    J = bratu.jacobian("f", "x", dim=7, parmax=2, x=BRATU_X, prm=BRATU_PRM)
    h = float(np.float32(2.0) / np.float32(8))
    x1, (p1, p2) = BRATU_X[0], BRATU_PRM
    du = 1 / (1 + p2 * x1) ** 2
    expected = -2 + h * h * p1 / np.float32(12.0) * 10 * np.exp(x1 / (1 + p2 * x1)) * du
    assert J[0, 0] == pytest.approx(expected, rel=1e-6)
    # F(1) does not depend on x(3)
    assert J[0, 2] == 0.0


FORTRAN_ORDER = """
subroutine weighted(m, n, w, a, s, b)
  integer m, n
  double precision w(m, n), a(m, n), s, b(m, n)
  integer i, j
  s = 0
  do j = 1, n
    do i = 1, m
      s = s + w(i, j) * a(i, j)**2
      b(i, j) = 10*i + j
    end do
  end do
end subroutine
"""


def test_two_dimensional_arrays_keep_fortran_order():
    p = adjit.compile(FORTRAN_ORDER)
    rng = np.random.default_rng(1)
    w = rng.uniform(1, 2, (3, 4))
    a_c = np.ascontiguousarray(rng.uniform(-1, 1, (3, 4)))
    a_f = np.asfortranarray(a_c)
    strided = np.ascontiguousarray(rng.uniform(-1, 1, (4, 3))).T  # non-contiguous
    for a in (a_c, a_f, strided):
        value, g = p.grad("s", "a", m=3, n=4, w=w, a=a)
        assert value == pytest.approx(np.sum(w * a**2), rel=1e-14)
        assert g["a"].shape == (3, 4)
        np.testing.assert_allclose(g["a"], 2 * w * a, rtol=1e-15)
    out = p.run(m=3, n=4, w=w, a=a_c)
    # b(i, j) = 10 i + j, returned Fortran-ordered with the declared shape
    assert out["b"].flags.f_contiguous and out["b"].shape == (3, 4)
    assert out["b"][1, 2] == 23.0
    # a flat vector fills a 2-D argument in column-major order
    flat = np.ravel(a_c, order="F")
    assert p.run(m=3, n=4, w=w, a=flat)["s"] == out["s"]
    # the Jacobian's columns follow the column-major element order
    J = p.jacobian("s", "a", m=3, n=4, w=w, a=a_c)
    np.testing.assert_allclose(J[0], np.ravel(2 * w * a_c, order="F"), rtol=1e-15)


def test_gradient_of_several_inputs_and_one_element(bratu):
    args = dict(dim=7, parmax=2, x=BRATU_X, prm=BRATU_PRM)
    J = bratu.jacobian("f", ["x", "prm"], **args)
    value, g = bratu.grad("f(3)", ["x", "prm(1)"], **args)
    assert value == bratu.run(**args)["f"][2]
    np.testing.assert_array_equal(g["x"], J[2, :7])
    assert g["prm(1)"].shape == () and float(g["prm(1)"]) == J[2, 7]


def test_interpreter_agrees_with_native_code(griewank):
    interp = adjit.compile(EXAMPLES / "griewank.f90", interpreter=True)
    a = np.linspace(-1, 2, 9)
    assert interp.run(s=9, a=a)["c"] == griewank.run(s=9, a=a)["c"]
    np.testing.assert_array_equal(interp.grad("c", "a", s=9, a=a)[1]["a"],
                                  griewank.grad("c", "a", s=9, a=a)[1]["a"])


def test_function_result_and_integer_and_logical_arguments():
    p = adjit.compile("""
double precision function scale(n, flag, x)
  integer n
  logical flag
  double precision x(n)
  if (flag) then
    scale = n * sum(x)
  else
    scale = -sum(x)
  end if
end function
""")
    assert p.arguments == ["n", "flag", "x", "scale"]
    out = p.run(n=np.int64(3), flag=True, x=[1.0, 2.0, 3.0])
    assert out["scale"] == 18.0 and out["n"] == 3 and out["flag"] is True
    assert p.run(n=3, flag=np.bool_(False), x=[1, 2, 3])["scale"] == -6.0
    _, g = p.grad("scale", "x", n=3, flag=True, x=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g["x"], [3.0, 3.0, 3.0])


PRODUCT_WITH_STATE = """
module counter
  integer :: calls = 0
end module counter
subroutine prod(n, x, y)
  use counter
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  integer i
  calls = calls + 1
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine prod
"""


@pytest.mark.parametrize("source,entry", [
    (EXAMPLES / "product.f90", "product"),
    (PRODUCT_WITH_STATE, "prod"),
])
def test_in_place_zeroing_gives_the_same_gradients(source, entry):
    plain = adjit.compile(source, entry=entry)
    zeroing = adjit.compile(source, entry=entry, in_place_zeroing=True)
    x = np.linspace(0.5, 1.5, 7)
    # Repeated gradients (the workspace path), from the same state.
    for k in range(3):
        v0, g0 = plain.grad("y", "x", n=7, x=x + k)
        v1, g1 = zeroing.grad("y", "x", n=7, x=x + k)
        assert v1 == v0
        np.testing.assert_array_equal(g1["x"], g0["x"])
    again = pickle.loads(pickle.dumps(zeroing))
    assert again._native.spec()[-1] is True
    _, g2 = again.grad("y", "x", n=7, x=x)
    np.testing.assert_array_equal(g2["x"], plain.grad("y", "x", n=7, x=x)[1]["x"])

"""The automatic mode of checkpointing from Python: ``tape_budget``
gives the plain adjoint's gradient whatever the budget, and survives
pickling."""

import pathlib
import pickle

import numpy as np
import pytest

import adjit

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "corpus"


def heat_args(n=20, steps=300):
    x = np.linspace(0.0, 1.0, n)
    return dict(n=n, nsteps=steps, u=np.sin(np.pi * x) + 0.2 * np.cos(7 * x), r=0.2)


@pytest.mark.parametrize("budget", [0, 4096, 1 << 30])
def test_tape_budget_gives_the_plain_gradient(budget):
    source = CORPUS / "binomial_ckp.f90"
    plain = adjit.compile(source, entry="heat")
    budgeted = adjit.compile(source, entry="heat", tape_budget=budget)
    v0, g0 = plain.grad("cost", "u,r", **heat_args())
    v1, g1 = budgeted.grad("cost", "u,r", **heat_args())
    assert v0 == v1
    np.testing.assert_allclose(g1["u"], g0["u"], rtol=1e-13, atol=0)
    assert g1["r"] == pytest.approx(g0["r"], rel=1e-13)
    again = pickle.loads(pickle.dumps(budgeted))
    _, g2 = again.grad("cost", "u,r", **heat_args())
    np.testing.assert_array_equal(g2["u"], g1["u"])

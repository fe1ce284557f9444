"""The README's Python tutorial runs as written (from the repository root)
and gives what its comments say."""

import os
import re

import numpy as np
import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def tutorial():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Python\n"):text.index("## Supported Fortran")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 4
    namespace = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    return namespace


def test_first_steps(tutorial):
    assert tutorial["g"]["a"][0] == pytest.approx(0.42915000416407467, rel=1e-15)
    assert tutorial["J"].shape == (2000, 2002)  # the Dask block reuses the name
    assert tutorial["out"]["c"] == pytest.approx(0.7401564142777317, rel=1e-15)


def test_minimize(tutorial):
    assert tutorial["res"].success
    np.testing.assert_allclose(tutorial["res"].x, np.ones(10), atol=1e-4)


def test_least_squares(tutorial):
    np.testing.assert_allclose(tutorial["fit"].x, [2.0, 1.3, 0.5, 0.1], rtol=1e-6)


def test_dask(tutorial):
    bratu, x = tutorial["bratu"], tutorial["x"]
    expected = bratu.jacobian("f", ["x", "prm"], dim=2000, parmax=2, x=x, prm=[1.3, 0.245828])
    np.testing.assert_array_equal(tutorial["J"], expected)

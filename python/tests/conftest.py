"""Shared fixtures of the Python tests: the repository's example sources,
the `adjit` command line built by cargo, and small Fortran programs."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import adjit

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def cli_path():
    """target/release/adjit of the repository (under CARGO_TARGET_DIR when
    set), as `cargo build --release` (or `cargo test --release`) leaves it."""
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "adjit"


@pytest.fixture(scope="session")
def cli():
    """Runs the adjit command line with `--json` and returns its output."""
    exe = cli_path()
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run `cargo build --release` first")

    def run(*args):
        out = subprocess.run([str(exe), *map(str, args), "--json"], check=True,
                             capture_output=True, text=True)
        return json.loads(out.stdout)

    return run


@pytest.fixture(scope="session")
def griewank():
    return adjit.compile(EXAMPLES / "griewank.f90")


@pytest.fixture(scope="session")
def bratu():
    return adjit.compile(EXAMPLES / "bratu.f")


def central_differences(f, x, h=1e-6):
    """Central differences of a vector function of a flat vector."""
    x = np.asarray(x, dtype=float)
    cols = []
    for k in range(x.size):
        step = h * max(1.0, abs(x[k]))
        xp, xm = x.copy(), x.copy()
        xp[k] += step
        xm[k] -= step
        cols.append((np.atleast_1d(f(xp)) - np.atleast_1d(f(xm))) / (xp[k] - xm[k]))
    return np.stack(cols, axis=-1)


BRATU_X = np.array([1.72, 3.45, 4.16, 4.87, 4.16, 3.45, 1.72])
BRATU_PRM = np.array([1.3, 0.245828])

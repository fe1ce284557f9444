"""A Program pickles by its sources and options and is compiled again on
load: in this process, and in other processes (multiprocessing)."""

import multiprocessing
import pickle

import numpy as np

import adjit
from conftest import EXAMPLES

COUNTER = """module state
  integer :: calls = 0
end module
subroutine counted(x, y)
  use state
  double precision x, y
  calls = calls + 1
  y = calls * x**2
end subroutine
"""


def test_roundtrip_keeps_sources_and_options(griewank):
    a = np.linspace(-2, 2, 8)
    q = pickle.loads(pickle.dumps(griewank))
    assert q.entry == "griewank" and q.arguments == griewank.arguments
    assert q.grad("c", "a", s=8, a=a)[1]["a"].tolist() == \
        griewank.grad("c", "a", s=8, a=a)[1]["a"].tolist()
    p = adjit.compile(EXAMPLES / "bratu.f", entry="bratu", bounds_checks=False,
                      interpreter=True)
    spec = pickle.loads(pickle.dumps(p))._native.spec()
    assert spec == p._native.spec()
    assert spec[0][0][0].endswith("bratu.f") and spec[1:] == ("bratu", None, [], False, True, None, False)


def test_fixed_form_text_survives_pickling():
    p = adjit.compile("      subroutine f(x)\n      x = 3*x\n      end\n", form="fixed")
    assert pickle.loads(pickle.dumps(p)).run(x=2.0)["x"] == 6.0


def test_unpickled_copy_starts_from_the_initial_state():
    p = adjit.compile(COUNTER)
    assert p.run(x=2.0)["y"] == 4.0
    assert p.run(x=2.0)["y"] == 8.0  # module state persists between calls
    q = pickle.loads(pickle.dumps(p))
    assert q.run(x=2.0)["y"] == 4.0


def _gradient(args):
    program, a = args
    return program.grad("c", "a", s=a.size, a=a)[1]["a"]


def test_programs_travel_to_other_processes(griewank):
    a = np.linspace(0.5, 3, 6)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_gradient, [(griewank, a), (griewank, 2 * a)])
    np.testing.assert_array_equal(results[0], _gradient((griewank, a)))
    np.testing.assert_array_equal(results[1], _gradient((griewank, 2 * a)))

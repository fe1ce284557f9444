"""Error mapping: rejected source raises FortranError with file, line and
column; runtime errors of generated code raise adjit.RuntimeError naming
the variable and line, and the process goes on; wrong requests raise
ValueError."""

import pickle

import numpy as np
import pytest

import adjit

BOUNDS = """subroutine walk(n, k, a, s)
  integer n, k
  double precision a(n), s
  integer i
  s = 0
  do i = 1, k
    s = s + a(i)
  end do
end subroutine
"""


def test_syntax_error_in_text_is_located():
    with pytest.raises(adjit.FortranError) as info:
        adjit.compile("subroutine f(x)\n  double precision x\n  x = = 1\nend subroutine\n")
    e = info.value
    assert (e.file, e.line, e.col) == ("<string>", 3, 7)
    assert str(e).startswith("<string>:3:7: error:")
    assert "x = = 1" in str(e) and "^" in str(e)
    assert isinstance(e, adjit.AdjitError)


def test_semantic_error_in_a_file_is_located(tmp_path):
    good = tmp_path / "good.f90"
    good.write_text("subroutine g(y)\n  double precision y\n  y = 1\nend subroutine\n")
    bad = tmp_path / "bad.f90"
    bad.write_text("subroutine h(y)\n  implicit none\n  double precision y\n  y = undefined_z\n"
                   "end subroutine\n")
    with pytest.raises(adjit.FortranError) as info:
        adjit.compile(good, str(bad))
    e = info.value
    assert e.file == str(bad) and e.line == 4 and e.col >= 7
    assert "undefined_z" in str(e)


def test_fixed_form_text_needs_the_form():
    src = "      subroutine f(x)\n      double precision x\n      x = 2*x\n      end\n"
    assert adjit.compile(src, form="fixed").run(x=3.0)["x"] == 6.0


def test_missing_file_and_unknown_entry():
    with pytest.raises(OSError):
        adjit.compile("no/such/file.f90")
    with pytest.raises(ValueError, match="no procedure named `nope`"):
        adjit.compile(BOUNDS, entry="nope")


def test_out_of_bounds_names_the_variable_and_line():
    p = adjit.compile(BOUNDS)
    assert p.run(n=3, k=3, a=[1.0, 2.0, 3.0])["s"] == 6.0
    for call in (lambda: p.run(n=3, k=4, a=[1.0, 2.0, 3.0]),
                 lambda: p.grad("s", "a", n=3, k=4, a=[1.0, 2.0, 3.0]),
                 lambda: p.jacobian("s", "a", "tangent", n=3, k=4, a=[1.0, 2.0, 3.0])):
        with pytest.raises(adjit.RuntimeError) as info:
            call()
        e = info.value
        assert isinstance(e, RuntimeError)  # the built-in one too
        assert e.variable == "a"
        assert (e.file, e.line) == ("<string>", 7)
        assert "4" in e.detail and "<string>:7:" in str(e)
    # the process and the program go on
    assert p.run(n=3, k=2, a=[1.0, 2.0, 3.0])["s"] == 3.0


def test_stop_is_a_runtime_error():
    p = adjit.compile("subroutine s(x)\n  double precision x\n  if (x < 0) stop 'negative'\n"
                      "  x = sqrt(x)\nend subroutine\n")
    with pytest.raises(adjit.RuntimeError, match="negative") as info:
        p.run(x=-1.0)
    assert info.value.line == 3


def test_errors_pickle_with_their_fields():
    with pytest.raises(adjit.RuntimeError) as info:
        adjit.compile(BOUNDS).run(n=2, k=3, a=[1.0, 2.0])
    e = pickle.loads(pickle.dumps(info.value))
    assert type(e) is adjit.RuntimeError
    assert (e.variable, e.line, str(e)) == ("a", 7, str(info.value))
    with pytest.raises(adjit.FortranError) as info:
        adjit.compile("subroutine f(\n")
    f = pickle.loads(pickle.dumps(info.value))
    assert (f.file, f.line, f.col, str(f)) == (info.value.file, info.value.line,
                                               info.value.col, str(info.value))


def test_bad_requests_raise_value_error():
    p = adjit.compile(BOUNDS)
    with pytest.raises(ValueError, match="no argument named `q`"):
        p.run(q=1.0)
    with pytest.raises(ValueError, match="not an integer"):
        p.run(n=2.5)
    with pytest.raises(ValueError, match="INTEGER"):
        p.run(n=2, k=np.array([1.5, 2.5]))
    with pytest.raises(ValueError, match="not a floating-point"):
        p.grad("s", "n", n=3, k=3, a=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="one scalar output"):
        p.grad("a", "a", n=3, k=3, a=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="unknown mode"):
        p.jacobian("s", "a", "sideways", n=3, k=3, a=[1.0, 2.0, 3.0])
    q = adjit.compile("subroutine m(x)\n  double precision x(2, 3)\n  x = 1\nend subroutine\n")
    with pytest.raises(ValueError, match=r"declared with shape \(2, 3\), got an array of shape \(3, 2\)"):
        q.run(x=np.zeros((3, 2)))
    with pytest.raises(TypeError):
        adjit.compile(42)


def test_wrong_array_size_is_a_runtime_error_not_a_crash():
    p = adjit.compile(BOUNDS)
    with pytest.raises(adjit.RuntimeError) as info:
        p.run(n=5, k=1, a=[1.0, 2.0])  # a(5) declared, 2 elements given
    assert info.value.variable == "a"

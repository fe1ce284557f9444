"""adjit: gradients, Jacobians and adjoints of Fortran, JIT-compiled in-process.

>>> import adjit
>>> p = adjit.compile('''
... subroutine sq(n, x, y)
...   integer n
...   double precision x(n), y
...   y = sum(x*x)
... end subroutine
... ''')
>>> value, g = p.grad("y", "x", n=3, x=[1.0, 2.0, 3.0])
>>> value, g["x"].tolist()
(14.0, [2.0, 4.0, 6.0])

:func:`compile` turns Fortran source (text or files) into a :class:`Program`
whose entry procedure is native code; :meth:`Program.run`,
:meth:`Program.grad` and :meth:`Program.jacobian` call it, its adjoint
(reverse mode) and its tangent (forward mode) with NumPy arrays in and out.
:meth:`Program.objective` gives SciPy-ready ``fun`` / ``jac`` callables, and
:mod:`adjit.dask` spreads Jacobians over a Dask cluster.

Arguments are passed by their Fortran names as keywords (case-insensitive
in Fortran, so use the lower-case spelling); scalars are set before arrays,
so ``x(n)`` is sized by ``n`` whatever the order of the keywords. Arrays
are read and written in column-major (Fortran) order: a NumPy array with
the declared shape is taken as is (a Fortran-ordered one with one copy of
its memory, a C-ordered one element by element), a 1-D array fills an
array of any rank in column-major order, and array results come back as
Fortran-ordered NumPy arrays that own the engine's buffers (no copy).
Generated code runs without the GIL.

A :class:`Program` pickles by its sources and options and is compiled
again when unpickled (by another process, a Dask worker): the copy starts
from the program's initial state (module variables and SAVE locals as
their initializers and DATA set them).
"""

import os

import numpy as np

from . import _adjit
from ._errors import AdjitError, FortranError, RuntimeError

__all__ = [
    "AdjitError",
    "FortranError",
    "Objective",
    "Program",
    "RuntimeError",
    "compile",
]

#: File name extensions taken as Fortran sources when a string names no
#: existing file (then a missing file is an error, not source text).
_FORTRAN_SUFFIXES = (".f", ".for", ".f77", ".ftn", ".f90", ".f95", ".f03", ".f08")


def _source_item(item, index):
    """``(name, text)`` for source text, ``(path, None)`` for a file."""
    if isinstance(item, os.PathLike):
        return (os.fspath(item), None)
    if not isinstance(item, str):
        raise TypeError(
            f"a source is Fortran text or a path, not {type(item).__name__}")
    if "\n" not in item:
        if os.path.isfile(item) or item.strip().lower().endswith(_FORTRAN_SUFFIXES):
            return (item, None)
    name = "<string>" if index == 0 else f"<string {index + 1}>"
    return (name, item)


def compile(source_or_path, *more, entry=None, form=None, include_dirs=(),
            bounds_checks=True, interpreter=False, tape_budget=None,
            in_place_zeroing=False):
    """Compile Fortran into a :class:`Program`.

    Each positional argument is Fortran source text (anything with a
    newline, named ``<string>``, ``<string 2>``, ...) or the path of a
    source file (a ``PathLike``, or a one-line string naming a file); they
    form one program. ``entry`` names the procedure to call (default: the
    first one). ``form`` forces ``"fixed"`` or ``"free"`` source form
    (default: guessed from each file name; free form for text).
    ``include_dirs`` are searched for INCLUDE files after the including
    file's directory. ``bounds_checks=False`` drops array bounds checks;
    ``interpreter=True`` runs the reference interpreter instead of native
    code. ``tape_budget`` (bytes) turns on the automatic mode of
    checkpointing: a loop marked ``!$AD BINOMIAL-CKP`` records its whole
    tape when its projected tape fits the budget, and is checkpointed
    (with as many snapshots as fit) when it does not.
    ``in_place_zeroing=True`` makes :meth:`Program.grad`'s adjoint gradients
    with a copy of the adjoint that zeroes the gradient itself, evaluated
    into a gradient buffer (``AdjointOptions::in_place_zeroing`` of the Rust
    API): the same gradients, about 1.7x the work to compile each adjoint.

    Raises :class:`FortranError` (with ``file``, ``line``, ``col``) when the
    source is rejected, ``OSError`` when a file cannot be read and
    ``ValueError`` for an unknown entry.
    """
    items = [_source_item(s, i) for i, s in enumerate((source_or_path,) + more)]
    native = _adjit.Program(items, entry, form, [os.fspath(d) for d in include_dirs],
                            bool(bounds_checks), bool(interpreter),
                            None if tape_budget is None else int(tape_budget),
                            bool(in_place_zeroing))
    return Program(native)


def _rebuild(spec):
    """Unpickles a :class:`Program`: compiles its sources again."""
    return Program(_adjit.Program(*spec))


class Program:
    """A compiled Fortran program, called through its entry procedure.

    Made by :func:`compile`. Derivative code for each choice of outputs
    and inputs is generated and compiled on first use and kept. Module
    variables and SAVE locals persist between calls as in a Fortran
    program; a derivative evaluation leaves them as one call of the entry
    would. A Program may be used from several threads (calls into one
    program with globals run one at a time).
    """

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    def __reduce__(self):
        return (_rebuild, (self._native.spec(),))

    def __repr__(self):
        return f"<adjit.Program {self.entry}({', '.join(self.arguments)})>"

    @property
    def entry(self):
        """The entry procedure's name."""
        return self._native.entry

    @property
    def procedures(self):
        """Names of every procedure of the program."""
        return self._native.procedures

    @property
    def arguments(self):
        """The entry's argument names, in call order (lower case)."""
        return self._native.arguments

    @property
    def warnings(self):
        """Compiler warnings, rendered with ``file:line:col``."""
        return self._native.warnings

    def shape(self, name, /, **args):
        """The declared shape of argument ``name`` when called with
        ``args`` (``()`` for a scalar)."""
        return tuple(self._native.shape(name, args))

    def run(self, /, **args):
        """Call the entry with ``args``; return every argument's value
        after the call, by lower-case name (a FUNCTION's result under its
        result name): scalars as ``float``, ``int``, ``bool`` or ``str``,
        arrays as Fortran-ordered NumPy arrays of the declared shape.
        Arguments not given start at zero (blank for CHARACTER).

        Raises :class:`adjit.RuntimeError` for a runtime error of the
        generated code and ``ValueError`` for unknown names or unusable
        values.
        """
        return self._native.run(args)

    def grad(self, of, wrt, mode=None, /, **args):
        """The gradient of one scalar output at ``args``.

        ``of`` names a scalar argument or one element (``"f(3)"``); ``wrt``
        a name or a list of names (``"x"``, ``["x", "p"]``, ``"a(2)"``).
        Returns ``(value, gradient)``: the output's value and a dict from
        each ``wrt`` selection to an array shaped like it (0-d for a scalar
        or one element). ``mode`` (positional, since keywords are Fortran
        arguments) is ``"adjoint"`` (default, one reverse sweep),
        ``"tangent"`` or ``"fd"`` (central finite differences).
        """
        return self._native.grad(of, wrt, mode, args)

    def jacobian(self, of, wrt, mode=None, /, **args):
        """The Jacobian of the outputs ``of`` with respect to the inputs
        ``wrt`` at ``args`` as a 2-D array: one row per output element and
        one column per input element, each argument's elements in
        column-major order, the arguments in the order given. ``mode``
        (positional) is ``"adjoint"`` (one forward sweep, one reverse sweep
        per row), ``"tangent"`` (vector sweeps of up to 8 columns), ``"fd"``
        or ``"auto"`` (default: adjoint when there are no more rows than
        columns).
        """
        return self._native.jacobian(of, wrt, mode, args)[0]

    def objective(self, of, wrt, /, **fixed):
        """SciPy-ready callables over one flat float64 vector ``x``: the
        elements of the ``wrt`` arguments (whole arguments, column-major,
        in the order given), the other arguments set from ``fixed``.

        For one scalar output ``of``, ``fun(x)`` is its value and
        ``jac(x)`` its gradient (both from one adjoint sweep, cached for
        the last ``x``), ready for ``scipy.optimize.minimize(fun, x0,
        jac=jac, method="L-BFGS-B")``. For array outputs (or a list of
        names), ``fun(x)`` is the vector of their elements and ``jac(x)``
        the Jacobian, for ``scipy.optimize.least_squares(fun, x0,
        jac=jac)``. See :class:`Objective`.
        """
        return Objective(self, of, wrt, fixed)


class Objective:
    """``fun(x)`` and ``jac(x)`` over the flat vector of the ``wrt``
    arguments' elements (see :meth:`Program.objective`).

    ``x0`` is the starting vector taken from the fixed values (zeros for
    inputs not given); ``unpack(x)`` gives the dict of argument values a
    vector stands for. An Objective unpacks as ``fun, jac = objective`` and
    pickles with its program.
    """

    def __init__(self, program, of, wrt, fixed):
        self.program = program
        self.of = [of] if isinstance(of, str) else list(of)
        self.wrt = [wrt] if isinstance(wrt, str) else list(wrt)
        for name in self.of + self.wrt:
            if "(" in name:
                raise ValueError(
                    f"an objective takes whole arguments: `{name}` selects one element")
        self.fixed = dict(fixed)
        self._layout = []
        start = 0
        for name in self.wrt:
            shape = program.shape(name, **self.fixed)
            size = int(np.prod(shape)) if shape else 1
            self._layout.append((name, shape, start, start + size))
            start += size
        self.size = start
        out_shapes = [program.shape(name, **self.fixed) for name in self.of]
        self.scalar = len(self.of) == 1 and out_shapes[0] == ()
        self._last = None

    def __iter__(self):
        return iter((self.fun, self.jac))

    def __len__(self):
        return 2

    @property
    def x0(self):
        """The starting vector: the fixed values of the ``wrt`` arguments
        (zeros where none was given)."""
        x = np.zeros(self.size)
        for name, shape, a, b in self._layout:
            if name in self.fixed:
                x[a:b] = np.ravel(np.broadcast_to(
                    np.asarray(self.fixed[name], dtype=float), shape), order="F")
        return x

    def unpack(self, x):
        """The arguments (fixed ones and the ``wrt`` ones from ``x``)."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.size,):
            raise ValueError(f"x has shape {x.shape}, expected ({self.size},)")
        args = dict(self.fixed)
        for name, shape, a, b in self._layout:
            args[name] = x[a:b].reshape(shape, order="F") if shape else x[a]
        return args

    def _cached(self, x, kind):
        last = self._last
        if last is not None and last[0] == kind and np.array_equal(last[1], x):
            return last[2]
        return None

    def _gradient(self, x):
        hit = self._cached(x, "grad")
        if hit is None:
            value, parts = self.program.grad(self.of[0], self.wrt, **self.unpack(x))
            g = np.concatenate([np.ravel(parts[n], order="F") for n in self.wrt])
            hit = (value, g)
            self._last = ("grad", np.array(x, dtype=np.float64, copy=True), hit)
        return hit

    def fun(self, x):
        """The objective at ``x``: a float for one scalar output, else the
        vector of the output elements."""
        if self.scalar:
            return self._gradient(x)[0]
        hit = self._cached(x, "jac")
        if hit is not None:
            return hit[0]
        out = self.program.run(**self.unpack(x))
        return np.concatenate([np.ravel(out[n], order="F") for n in self.of])

    def jac(self, x):
        """The gradient (one scalar output) or Jacobian at ``x``."""
        if self.scalar:
            return self._gradient(x)[1].copy()
        hit = self._cached(x, "jac")
        if hit is None:
            matrix, values = self.program._native.jacobian(
                self.of, self.wrt, None, self.unpack(x))
            hit = (values, matrix)
            self._last = ("jac", np.array(x, dtype=np.float64, copy=True), hit)
        return hit[1]

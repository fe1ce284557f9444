"""The exceptions adjit raises.

Engine errors map to Python as follows: rejected source to
:class:`FortranError` (with file, line and column), runtime errors of
generated code to :class:`RuntimeError` (a subclass of the built-in one,
naming the variable and the Fortran line), wrong requests (unknown argument
names, bad values, shapes that do not match the declarations) to
``ValueError``, unreadable files to ``OSError``, and anything else to
:class:`AdjitError`. Every exception pickles with its fields, so errors
raised on Dask workers reach the client intact.
"""

import builtins

__all__ = ["AdjitError", "FortranError", "RuntimeError"]


class AdjitError(Exception):
    """Base class of adjit's own exceptions; also raised when
    differentiation or native compilation fails."""

    def __init__(self, message):
        super().__init__(message)
        #: The full message, with ``file:line:col`` and source excerpts.
        self.message = message

    def __reduce__(self):
        return (type(self), (self.message,), self.__dict__)


class FortranError(AdjitError):
    """The Fortran source was rejected (parse or semantic errors).

    ``str(e)`` is the rendered diagnostic: every error as
    ``file:line:col: error: message`` with the source line and a caret.
    ``file``, ``line`` and ``col`` locate the first error (``None`` when it
    has no source position).
    """

    def __init__(self, message, file=None, line=None, col=None):
        super().__init__(message)
        #: Name of the file of the first error.
        self.file = file
        #: Its 1-based line.
        self.line = line
        #: Its 1-based column.
        self.col = col

    def __reduce__(self):
        return (type(self), (self.message, self.file, self.line, self.col))


class RuntimeError(AdjitError, builtins.RuntimeError):
    """Generated code stopped with an error (index out of bounds, integer
    division by zero, STOP, argument of the wrong size, ...).

    The interpreter process is unharmed. ``variable`` names the Fortran
    variable involved (``None`` when there is none, as for STOP);
    ``file``, ``line`` and ``col`` locate the statement; ``kind`` says what
    went wrong and ``detail`` gives the particulars (such as
    ``index 11 outside 1:10 in dimension 1``).
    """

    def __init__(self, message, variable=None, file=None, line=None, col=None,
                 kind=None, detail=None):
        super().__init__(message)
        #: The variable involved, lower case, or ``None``.
        self.variable = variable
        #: The file of the failing statement.
        self.file = file
        #: Its 1-based line (``None`` when unknown).
        self.line = line
        #: Its 1-based column.
        self.col = col
        #: What went wrong, in words.
        self.kind = kind
        #: Particulars, such as the index and the bounds.
        self.detail = detail

    def __reduce__(self):
        return (type(self), (self.message, self.variable, self.file, self.line,
                             self.col, self.kind, self.detail))

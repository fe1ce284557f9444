"""Type stubs of the adjit package (see adjit/__init__.py for the docs)."""

import os
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence, Union

import numpy as np
import numpy.typing as npt

from ._errors import AdjitError as AdjitError
from ._errors import FortranError as FortranError
from ._errors import RuntimeError as RuntimeError

Source = Union[str, os.PathLike[str]]
Selection = Union[str, Sequence[str]]
Mode = Literal["adjoint", "tangent", "fd", "auto"]
ArgValue = Union[bool, int, float, str, npt.ArrayLike]

def compile(
    source_or_path: Source,
    *more: Source,
    entry: str | None = ...,
    form: Literal["fixed", "free"] | None = ...,
    include_dirs: Sequence[Source] = ...,
    bounds_checks: bool = ...,
    interpreter: bool = ...,
    tape_budget: int | None = ...,
    in_place_zeroing: bool = ...,
) -> Program: ...

class Program:
    @property
    def entry(self) -> str: ...
    @property
    def procedures(self) -> list[str]: ...
    @property
    def arguments(self) -> list[str]: ...
    @property
    def warnings(self) -> list[str]: ...
    def shape(self, name: str, /, **args: ArgValue) -> tuple[int, ...]: ...
    def run(self, /, **args: ArgValue) -> dict[str, Any]: ...
    def grad(
        self, of: str, wrt: Selection, mode: Mode | None = ..., /, **args: ArgValue
    ) -> tuple[float, dict[str, np.ndarray]]: ...
    def jacobian(
        self, of: Selection, wrt: Selection, mode: Mode | None = ..., /, **args: ArgValue
    ) -> np.ndarray: ...
    def objective(self, of: Selection, wrt: Selection, /, **fixed: ArgValue) -> Objective: ...

class Objective:
    program: Program
    of: list[str]
    wrt: list[str]
    fixed: dict[str, ArgValue]
    size: int
    scalar: bool
    def __iter__(self) -> Iterator[Callable[[np.ndarray], Any]]: ...
    def __len__(self) -> int: ...
    @property
    def x0(self) -> np.ndarray: ...
    def unpack(self, x: npt.ArrayLike) -> dict[str, ArgValue]: ...
    def fun(self, x: np.ndarray) -> float | np.ndarray: ...
    def jac(self, x: np.ndarray) -> np.ndarray: ...

__all__: list[str]

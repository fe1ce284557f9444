"""Type stubs of adjit.dask (see adjit/dask.py for the docs)."""

from typing import Any

import numpy as np

from . import ArgValue, Mode, Program, Selection

def jacobian(
    program: Program,
    of: Selection,
    wrt: Selection,
    mode: Mode | None = ...,
    /,
    *,
    client: Any | None = ...,
    block: int | None = ...,
    **args: ArgValue,
) -> np.ndarray: ...

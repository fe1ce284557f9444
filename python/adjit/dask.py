"""Jacobians spread over a Dask cluster (``dask.distributed``).

:func:`jacobian` splits a Jacobian into blocks: blocks of rows, each by one
forward sweep and one reverse sweep per row (adjoint mode, chosen when there
are no more outputs than inputs), or blocks of columns, each by vector
tangent sweeps of up to 8 columns (tangent mode). The program and the
arguments travel to every worker once (scattered, broadcast); each worker
compiles the program when it receives it and keeps it for every block it
computes. The same code runs on a :class:`distributed.LocalCluster` and on a
real cluster: only the client's address changes::

    from distributed import Client, LocalCluster
    import adjit, adjit.dask

    program = adjit.compile("bratu.f")
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1) as cluster, \\
            Client(cluster) as client:          # or Client("tcp://scheduler:8786")
        J = adjit.dask.jacobian(program, "f", ["x", "prm"], client=client,
                                dim=1000, parmax=2, x=x, prm=[1.3, 0.245828])

How it scales: a block of ``b`` rows costs one forward sweep plus ``b``
reverse sweeps, so splitting rows over ``w`` workers repeats the forward
sweep ``w`` times (for Jacobians whose forward sweep is cheap next to the
rows this is close to a ``w``-fold speed-up); a block of ``b`` columns
costs ``ceil(b / 8)`` vector tangent sweeps and nothing is repeated. Each
task carries a fixed cost (scheduling, a few hundred microseconds to
milliseconds; compiling the program once per worker): blocks should take
well over that, which is why the default is one block per worker thread.
Every block starts from the program's initial state (module variables and
SAVE locals as compiled), and blocks are put together in order, so the
result equals :meth:`adjit.Program.jacobian` on a freshly compiled program,
bit for bit.
"""

import math

import numpy as np

__all__ = ["jacobian"]


class _Payload:
    """What every worker needs once: the program and the arguments."""

    __slots__ = ("program", "args")

    def __init__(self, program, args):
        self.program = program
        self.args = args

    def __getstate__(self):
        return (self.program, self.args)

    def __setstate__(self, state):
        self.program, self.args = state


def _block(payload, of, wrt, mode, start, stop):
    """One block of the Jacobian, on a worker."""
    return payload.program._native.jacobian_block(
        of, wrt, mode, start, stop, payload.args)


def _worker_threads(client):
    threads = client.nthreads()
    return max(1, sum(threads.values()))


def jacobian(program, of, wrt, mode=None, /, *, client=None, block=None, **args):
    """The Jacobian of ``of`` with respect to ``wrt`` at ``args`` (as in
    :meth:`adjit.Program.jacobian`), computed in blocks on the workers of a
    Dask cluster.

    ``client`` is a :class:`distributed.Client` (default: the current one,
    ``distributed.get_client()``). ``block`` is the number of rows (adjoint)
    or columns (tangent) per task (default: the count split evenly over the
    workers' threads; a tangent block is rounded up to whole sweeps of 8).
    ``mode`` (positional) is ``"adjoint"``, ``"tangent"`` or ``"auto"``
    (default: adjoint when there are no more rows than columns). Errors on
    the workers (:class:`adjit.RuntimeError`, ...) are raised here.
    """
    import distributed

    if client is None:
        client = distributed.get_client()
    rows, cols, mode = program._native.jacobian_plan(of, wrt, mode, args)
    count = rows if mode == "adjoint" else cols
    if block is None:
        block = max(1, math.ceil(count / _worker_threads(client)))
        if mode == "tangent":
            block = 8 * math.ceil(block / 8)
    block = int(block)
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}")
    payload = client.scatter(_Payload(program, args), broadcast=True, hash=False)
    starts = range(0, max(count, 1), block)
    futures = [
        client.submit(_block, payload, of, wrt, mode, s, min(s + block, count), pure=False)
        for s in starts
    ]
    parts = client.gather(futures)
    if mode == "adjoint":
        return np.vstack(parts) if parts else np.zeros((rows, cols))
    return np.hstack(parts) if parts else np.zeros((rows, cols))

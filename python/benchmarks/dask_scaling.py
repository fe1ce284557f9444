"""How adjit.dask.jacobian scales: two Jacobians in one process, and on
LocalClusters of 1 and 2 worker processes, by rows (adjoint) and by
columns (tangent); the median of 3 runs of each.

- Bratu (dim x dim + 2, cheap entries, a large dense result): the matrix
  itself (rows x cols x 8 bytes) crosses the network, and that dominates.
- A compute-bound model (16 outputs, each a double sum over 200 inputs:
  O(outputs x inputs^2) work per sweep, a small result): the sweeps
  dominate and the blocks run in parallel.

    python python/benchmarks/dask_scaling.py [DIM]
"""

import pathlib
import statistics
import sys
import time

import numpy as np
from distributed import Client, LocalCluster

import adjit
import adjit.dask

ROOT = pathlib.Path(__file__).resolve().parents[2]


def median_time(f, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


COUPLED = """
subroutine coupled(m, n, x, y)
  integer m, n
  double precision x(n), y(m)
  integer i, j, k
  do k = 1, m
    y(k) = 0
    do i = 1, n
      do j = 1, n
        y(k) = y(k) + cos(k*x(i) - x(j)) / n
      end do
    end do
  end do
end subroutine
"""


def compare(title, program, of, wrt, args):
    print(title)
    for mode in ("adjoint", "tangent"):
        single = median_time(lambda: program.jacobian(of, wrt, mode, **args))
        line = [f"{mode:8s} one process {single * 1e3:8.1f} ms"]
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                adjit.dask.jacobian(program, of, wrt, mode, client=client, **args)
                t = median_time(lambda: adjit.dask.jacobian(
                    program, of, wrt, mode, client=client, **args))
            line.append(f"{workers} worker(s) {t * 1e3:8.1f} ms ({single / t:.2f}x)")
        print(" | ".join(line))


def main():
    dim = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    bratu = adjit.compile(ROOT / "examples" / "bratu.f")
    compare(f"Bratu Jacobian, {dim} x {dim + 2}", bratu, "f", ["x", "prm"],
            dict(dim=dim, parmax=2, x=4 * np.sin(np.linspace(0.1, 3.0, dim)),
                 prm=np.array([1.3, 0.245828])))
    coupled = adjit.compile(COUPLED)
    compare("compute-bound Jacobian, 16 x 200", coupled, "y", "x",
            dict(m=16, n=200, x=np.linspace(0, 1, 200)))


if __name__ == "__main__":
    main()

"""The overhead of calling adjit from Python: the median time of one
gradient of Griewank's function (n = 1000 by default, arrays in and out)
from Python, against the same call through the Rust API
(python/examples/overhead.rs), and their ratio. The issue's bound is 1.2.

    python python/benchmarks/overhead.py [N]

Both sides take the median of single calls over about 2 s; each side runs
three times, alternating, and the medians of the three are compared (the
machine is shared: numbers move by 10-20% between runs).
"""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

import adjit

ROOT = pathlib.Path(__file__).resolve().parents[2]


def rust_seconds(n):
    out = subprocess.run(
        ["cargo", "run", "--quiet", "--release", "-p", "adjit-python", "--example", "overhead",
         "--", str(n)],
        cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["seconds"]


def python_seconds(program, n, budget=2.0):
    x = -3.0 + 6.0 * np.arange(n) / n
    samples = []
    start = time.perf_counter()
    while len(samples) < 200 or (time.perf_counter() - start < budget and len(samples) < 20000):
        t = time.perf_counter()
        value, g = program.grad("c", "a", s=n, a=x)
        samples.append(time.perf_counter() - t)
    assert np.isfinite(value + g["a"][n // 2])
    return statistics.median(samples)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    program = adjit.compile(ROOT / "examples" / "griewank.f90")
    rust_seconds(n)  # build the example before timing anything
    rust, python = [], []
    for _ in range(3):
        rust.append(rust_seconds(n))
        python.append(python_seconds(program, n))
    r, p = statistics.median(rust), statistics.median(python)
    print(f"Griewank gradient, n = {n}, arrays in and out "
          f"({os.cpu_count()} cores, medians of 3 runs)")
    print(f"  Rust API   {r * 1e6:9.2f} us   (runs: {', '.join(f'{s * 1e6:.2f}' for s in rust)})")
    print(f"  Python     {p * 1e6:9.2f} us   (runs: {', '.join(f'{s * 1e6:.2f}' for s in python)})")
    print(f"  ratio Python / Rust: {p / r:.3f}")


if __name__ == "__main__":
    main()

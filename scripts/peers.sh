#!/usr/bin/env bash
# adjit vs gfortran -O2 in one run: JIT primal / gfortran primal, adjoint /
# primal and adjit gradient / hand-written gradient (benches/peers/).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --bench peers "$@"

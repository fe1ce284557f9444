#!/usr/bin/env bash
# The emitted Fortran shown in the documentation (docs/*_b.f90), made by
# `adjit emit`: each file is the whole output, support module included, so
# it is never a hand copy of fortran/src/support.f90.
#
#   scripts/docs.sh            rewrite docs/griewank_b.f90 and docs/bratu_b.f90
#   scripts/docs.sh --check    compare instead (exit 1 naming the stale ones)
#
# `tests/cli.rs` (docs_fortran_is_what_emit_writes) runs the same commands
# and fails when a file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
adjit=${ADJIT:-target/release/adjit}
[ -x "$adjit" ] || cargo build --release --bin adjit
check=0
[ "${1:-}" = "--check" ] && check=1
stale=0
emit() {
  local out=$1
  shift
  local fresh
  fresh=$(mktemp)
  "$adjit" emit "$@" --mode adjoint --format fortran -o "$fresh"
  if [ $check = 1 ]; then
    if ! cmp -s "$fresh" "$out"; then
      echo "docs.sh: $out is stale (run scripts/docs.sh)" >&2
      stale=1
    fi
    rm -f "$fresh"
  else
    mv "$fresh" "$out"
  fi
}
# Keep these commands in step with DOCS_FORTRAN in tests/cli.rs.
emit docs/griewank_b.f90 examples/griewank.f90 --of c --wrt a
emit docs/bratu_b.f90 examples/bratu.f --of f --wrt x,prm
exit $stale

#!/usr/bin/env bash
# Instructions per call (callgrind) of benches/probe.rs at n = 1000 (or ADJIT_PROBE_N).
# usage: scripts/probe.sh PROBE_BINARY [CASES...]   (env MODES="primal tangent adjoint", FLAGS="--fma";
# modes compile / compile0: source to an optimized / baseline-tier adjoint, per compile)
# per call = (Ir at R=40 - Ir at R=20) / 20, collected only inside call_resolved* (the native call).
# Build the driver first: cargo build --release --bench probe; PROBE_BINARY is
# target/release/deps/probe-<hash> (the newest: ls -t target/release/deps/probe-* | grep -v "\.d$" | head -1).
set -euo pipefail
probe=$1; shift
cases=${*:-"griewank product bratu"}
modes=${MODES:-"primal tangent adjoint"}
tmp=$(mktemp -d)
ir() { # case mode reps
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1.$2.$3" --collect-atstart=no \
    --toggle-collect='*call_resolved*' "$probe" "$1" "$2" "$3" ${FLAGS:-} >/dev/null 2>&1
  callgrind_annotate "$tmp/cg.$1.$2.$3" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'
}
for c in $cases; do
  for m in $modes; do
    if [ "${m#compile}" != "$m" ]; then
      a=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/c20" "$probe" "$c" "$m" 20 >/dev/null 2>&1; callgrind_annotate "$tmp/c20" | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
      b=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/c40" "$probe" "$c" "$m" 40 >/dev/null 2>&1; callgrind_annotate "$tmp/c40" | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}')
    else
      a=$(ir "$c" "$m" 20); b=$(ir "$c" "$m" 40)
    fi
    echo "$c $m $(( (b - a) / 20 ))"
  done
done
rm -rf "$tmp"

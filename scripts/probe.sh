#!/usr/bin/env bash
# Instructions per call (callgrind) of benches/probe.rs at n = 1000 (or ADJIT_PROBE_N).
# usage: scripts/probe.sh PROBE_BINARY [CASES...]   (env MODES="primal tangent adjoint", FLAGS="--fma";
# modes compile / compile0: source to an optimized / baseline-tier adjoint, per compile)
# per call = (Ir at R=40 - Ir at R=20) / 20, collected only inside call_resolved* (the native call).
# Build the driver first: cargo build --release --bench probe; PROBE_BINARY is
# target/release/deps/probe-<hash> (the newest: ls -t target/release/deps/probe-* | grep -v "\.d$" | head -1).
set -euo pipefail
shopt -s inherit_errexit
probe=$1; shift
cases=${*:-"griewank product bratu"}
modes=${MODES:-"primal tangent adjoint"}
tmp=$(mktemp -d)
# run OUT ARGS...: the probe under callgrind; a failing probe (e.g. a runtime
# error at this ADJIT_PROBE_N) stops the script with the probe's message.
run() {
  local out=$1; shift
  if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$tmp/err"; then
    echo "probe failed: ${*:2}" >&2; { grep -A2 -m1 panicked "$tmp/err" || grep -v '^==' "$tmp/err" | tail -5; } >&2; exit 1
  fi
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1}'
}
ir() { # case mode reps
  run "$tmp/cg.$1.$2.$3" --collect-atstart=no --toggle-collect='*call_resolved*' \
    "$probe" "$1" "$2" "$3" ${FLAGS:-}
}
for c in $cases; do
  for m in $modes; do
    if [ "${m#compile}" != "$m" ]; then
      a=$(run "$tmp/c20" "$probe" "$c" "$m" 20); b=$(run "$tmp/c40" "$probe" "$c" "$m" 40)
    else
      a=$(ir "$c" "$m" 20); b=$(ir "$c" "$m" 40)
    fi
    echo "$c $m $(( (b - a) / 20 ))"
  done
done
rm -rf "$tmp"

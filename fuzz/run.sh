#!/usr/bin/env bash
# Runs a fuzzing campaign of adjit for a given time:
#   fuzz/run.sh front|jit|adjoint SECONDS [FUZZER OPTIONS...]
# (options such as `--seed K` or `--compile optimized` are passed to every
# run of the fuzzer; ADJIT_FUZZ_DIR moves its out/ and corpus/ folders, so
# that two campaigns of one target can run side by side). Builds the
# in-repo fuzzer (stable Rust, release), runs it, restarts it when it dies
# on a signal or a hang (the input is kept in fuzz/out/TARGET/; a restart
# gets a new seed, so that it does not replay the same inputs), and prints the campaign's totals (executions, stages reached, findings).
set -euo pipefail
target=${1:?usage: fuzz/run.sh front|jit|adjoint SECONDS}
seconds=${2:?usage: fuzz/run.sh front|jit|adjoint SECONDS}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
cargo build --release -p adjit-fuzz --quiet
bin=${CARGO_TARGET_DIR:-target}/release/adjit-fuzz
out="${ADJIT_FUZZ_DIR:-$here}/out/$target"
mkdir -p "$out"
rm -f "$out/totals"
end=$(( $(date +%s) + seconds ))
restarts=0
while :; do
  left=$(( end - $(date +%s) ))
  (( left > 0 )) || break
  status=0
  reseed=()
  (( restarts == 0 )) || reseed=(--seed "$RANDOM$RANDOM")
  "$bin" "$target" --seconds "$left" "$@" "${reseed[@]}" || status=$?
  if (( status == 0 )); then break; fi
  restarts=$((restarts + 1))
  if [[ -s "$out/last-signal.f90" ]]; then
    keep="$out/signal-$(date +%s)-$restarts.f90"
    cp "$out/last-signal.f90" "$keep"
    : > "$out/last-signal.f90"
    echo "run.sh: fuzzer died (status $status); input kept in $keep" >&2
  else
    echo "run.sh: fuzzer exited with status $status; restarting" >&2
  fi
done
read -r execs front called derived crashes internal < "$out/totals"
echo "target $target: $execs executions in $seconds s; front end passed $front, called natively $called, differentiated $derived"
echo "findings: $crashes panics, $restarts fatal exits (signals or hangs), $internal internal errors (see $out)"

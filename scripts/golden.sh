#!/usr/bin/env bash
# Golden files of the Fortran corpus (tests/corpus/*.f, *.f90), made by gfortran.
#
#   scripts/golden.sh [--check]      regenerate every case into a temporary
#                                    directory and compare with the committed
#                                    golden files (exit non-zero naming the
#                                    stale ones); the default, run by CI
#   scripts/golden.sh --write        rewrite tests/corpus/<name>.golden.json
#   scripts/golden.sh ... FILE...    restrict to some corpus programs
#
# For every `adjit-test:` header line of a program, `adjit-oracle` (the
# test-only crate tests/oracle) writes a Fortran main program that sets the
# arguments as the CLI would and prints the arguments after the call as
# `adjit run --json` does; gfortran -O0 compiles the program with the driver,
# and the last line of its output is the case's expected result; the lines
# before it are the program's own PRINT / WRITE output, kept as "stdout" and
# compared with what `adjit run --json` writes to standard error. A golden
# file is a JSON array of
# {"case": "<header arguments>", "expected": <run --json object>[, "stdout": "<text>"]}.
#
# Environment: ADJIT_ORACLE (the adjit-oracle binary; default: built with
# cargo), GFORTRAN (default gfortran), CARGO_TARGET_DIR as for cargo.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus="$root/tests/corpus"
mode=check
files=()
for arg in "$@"; do
  case "$arg" in
    --check) mode=check ;;
    --write) mode=write ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "golden.sh: unknown option $arg" >&2; exit 2 ;;
    *) files+=("$(cd "$(dirname "$arg")" && pwd)/$(basename "$arg")") ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  shopt -s nullglob
  files=("$corpus"/*.f "$corpus"/*.f90)
fi

gfortran=${GFORTRAN:-gfortran}
if [ -z "${ADJIT_ORACLE:-}" ]; then
  (cd "$root" && cargo build -q --release -p adjit-oracle)
  ADJIT_ORACLE="${CARGO_TARGET_DIR:-$root/target}/release/adjit-oracle"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fresh="$work/fresh"
mkdir -p "$fresh"

failed=0
for src in "${files[@]}"; do
  name=$(basename "$src")
  stem=${name%.*}
  out="$fresh/$stem.golden.json"
  entries=()
  while IFS= read -r case_args; do
    build="$work/build-$stem"
    rm -rf "$build"; mkdir -p "$build"
    read -r -a argv <<< "$case_args"
    if ! "$ADJIT_ORACLE" "$src" "${argv[@]}" > "$build/driver.f90" 2> "$build/err"; then
      echo "golden.sh: $name [$case_args]: adjit-oracle failed: $(cat "$build/err")" >&2
      failed=1; continue
    fi
    if ! "$gfortran" -O0 -ffree-line-length-none -fallow-argument-mismatch -J "$build" -o "$build/prog" \
         "$src" "$build/driver.f90" 2> "$build/err"; then
      echo "golden.sh: $name [$case_args]: gfortran failed:" >&2; cat "$build/err" >&2
      failed=1; continue
    fi
    if ! (cd "$build" && ./prog > stdout); then
      echo "golden.sh: $name [$case_args]: the compiled program failed" >&2
      failed=1; continue
    fi
    # PRINT / WRITE output of the program precedes the driver's JSON line.
    tail -n 1 "$build/stdout" > "$build/result.json"
    if ! jq -e 'type == "object"' "$build/result.json" > /dev/null; then
      echo "golden.sh: $name [$case_args]: driver output is not JSON: $(cat "$build/result.json")" >&2
      failed=1; continue
    fi
    # The program's own output (all lines but the last), when there is some.
    head -n -1 "$build/stdout" > "$build/text"
    text=""
    if [ -s "$build/text" ]; then
      text=", \"stdout\": $(jq -Rs . < "$build/text")"
    fi
    # Keep gfortran's digits verbatim (jq would reformat numbers).
    entries+=("{\"case\": $(jq -Rn --arg c "$case_args" '$c'), \"expected\": $(cat "$build/result.json")$text}")
  done < <(grep -E '^[!cC*][[:space:]]*adjit-test:' "$src" | sed -E 's/^[!cC*][[:space:]]*adjit-test:[[:space:]]*//; s/[[:space:]]+$//')
  if [ ${#entries[@]} -eq 0 ]; then
    echo "golden.sh: $name: no case produced a result" >&2
    failed=1; continue
  fi
  {
    echo "["
    for i in "${!entries[@]}"; do
      sep=","; [ "$i" -eq $((${#entries[@]} - 1)) ] && sep=""
      echo "  ${entries[$i]}$sep"
    done
    echo "]"
  } > "$out"
done

if [ "$failed" -ne 0 ]; then
  echo "golden.sh: some cases failed; nothing written or compared" >&2
  exit 1
fi

if [ "$mode" = write ]; then
  cp "$fresh"/*.golden.json "$corpus"/
  echo "golden.sh: wrote $(ls "$fresh" | wc -l) golden files"
else
  cd "$root"
  ADJIT_CORPUS_FRESH="$fresh" cargo test -q --release --test corpus fresh_gfortran_results_match_golden \
    -- --ignored --exact
fi

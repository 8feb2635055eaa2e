#!/usr/bin/env bash
# `make fuzz`: runs every cargo-fuzz target (or the ones named after $1) for $1 seconds
# (default 60) on its committed
# corpus (fuzz/corpus/<target>/), minimises the corpus afterwards, and prints executions
# per target. A crash input lands in fuzz/artifacts/<target>/ and the run fails; commit
# it: fuzz/props/tests/replay.rs replays it under `make test`.
#
# Sanitizer "none": every target is safe Rust, so AddressSanitizer has nothing to find and
# would halve the executions; the targets' own assertions, panics, overflow checks (debug
# assertions are on) and libFuzzer's timeout and memory limits are what find bugs.
# libFuzzer needs unstable rustc flags: RUSTC_BOOTSTRAP=1 lets the stable toolchain take them.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1
secs="${1:-60}"
shift || true
logs=target/fuzz-logs
mkdir -p "$logs"

cargo fuzz build --sanitizer none
failed=0
summary=()
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || mapfile -t targets < <(cargo fuzz list)
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log="$logs/$t.log"
  echo "fuzz: $t for ${secs}s"
  if cargo fuzz run --sanitizer none "$t" -- -max_total_time="$secs" -timeout=10 \
      -print_final_stats=1 >"$log" 2>&1; then
    result=ok
  else
    result=CRASH
    failed=1
    grep -E 'panicked|Test unit written|ERROR' "$log" | head -5 >&2 || true
  fi
  execs="$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)"
  before="$(ls "corpus/$t" | wc -l)"
  cargo fuzz cmin --sanitizer none "$t" >"$logs/$t.cmin.log" 2>&1 || true
  after="$(ls "corpus/$t" | wc -l)"
  summary+=("$(printf '%-16s %-6s %12s execs %6s corpus (%s before cmin)' "$t" "$result" "${execs:-?}" "$after" "$before")")
done
echo
echo "fuzz: ${secs}s per target"
printf '%s\n' "${summary[@]}"
exit "$failed"

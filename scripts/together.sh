#!/usr/bin/env bash
# bash scripts/together.sh 'COMMAND' 'COMMAND' ...: runs the commands at the same time (each
# with `bash -c`, so a function the caller exported with `export -f` is there), keeps each
# one's output apart and prints it whole, with its time, once it ends, in the order given;
# fails, naming each command that failed, if any did. Each runs in a process group of its
# own: a command still running when this script is stopped is stopped with all it started.
# For suites whose time is mostly waiting (a browser's page loads, a server's timeouts):
# side by side they take about as long as the longest of them.
set -euo pipefail

logs="$(mktemp -d)"
pids=()
stop() {
  for p in "${pids[@]}"; do
    [ -n "$p" ] || continue
    kill -TERM -- "-$p" 2>/dev/null || true
  done
  rm -rf "$logs"
}
trap stop EXIT
trap 'exit 143' INT TERM

for i in $(seq 0 $(($# - 1))); do
  cmd="${@:$((i + 1)):1}"
  # The command's own time, in seconds, beside its output.
  setsid bash -c 's=$SECONDS; st=0; bash -c "$1" || st=$?; echo $((SECONDS - s)) >"$2"; exit $st' \
    together "$cmd" "$logs/$i.time" >"$logs/$i" 2>&1 &
  pids+=("$!")
done

failed=()
for i in $(seq 0 $(($# - 1))); do
  cmd="${@:$((i + 1)):1}"
  status=0
  wait "${pids[$i]}" || status=$?
  pids[$i]=""
  echo "== $cmd ($(cat "$logs/$i.time" 2>/dev/null || echo '?') s$([ "$status" -eq 0 ] || echo ", FAILED: exit $status"))"
  cat "$logs/$i"
  [ "$status" -eq 0 ] || failed+=("$cmd")
done
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'together: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi

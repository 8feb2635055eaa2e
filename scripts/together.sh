#!/usr/bin/env bash
# bash scripts/together.sh 'COMMAND' 'COMMAND' ...: runs the commands at the same time (each
# with `bash -c`, so a function the caller exported with `export -f` is there), keeps each
# one's output apart and prints it whole, with its time, once it ends, in the order given;
# fails, naming each command that failed, if any did. Each runs in a process group of its
# own: stopped (INT, TERM), this script stops all they started, and prints what each
# command still running had printed, so a hang shows where it hung.
# For suites whose time is mostly waiting (a browser's page loads, a server's timeouts):
# side by side they take about as long as the longest of them.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "together: no command to run" >&2
  exit 2
fi

logs="$(mktemp -d)"
cmds=("$@")
pids=()
stop() {
  for i in "${!pids[@]}"; do
    [ -n "${pids[$i]}" ] || continue
    kill -TERM -- "-${pids[$i]}" 2>/dev/null || true
    echo "== ${cmds[$i]} (stopped while running)"
    cat "$logs/$i" 2>/dev/null || true
  done
  rm -rf "$logs"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for i in "${!cmds[@]}"; do
  # The command's own time, in seconds, beside its output. `setsid -w`: a new session
  # even where the caller's job control made this a group leader, and its exit status.
  setsid -w bash -c 's=$SECONDS; st=0; bash -c "$1" || st=$?; echo $((SECONDS - s)) >"$2"; exit $st' \
    together "${cmds[$i]}" "$logs/$i.time" >"$logs/$i" 2>&1 &
  pids+=("$!")
done

failed=()
for i in "${!cmds[@]}"; do
  status=0
  wait "${pids[$i]}" || status=$?
  pids[$i]=""
  echo "== ${cmds[$i]} ($(cat "$logs/$i.time" 2>/dev/null || echo '?') s$([ "$status" -eq 0 ] || echo ", FAILED: exit $status"))"
  cat "$logs/$i"
  [ "$status" -eq 0 ] || failed+=("${cmds[$i]}")
done
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'together: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi

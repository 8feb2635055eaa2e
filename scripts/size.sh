#!/usr/bin/env bash
# Prints the gzip -9 sizes of the release wasm and its JS glue, and their sum, in KiB.
# Exits non-zero when the sum is over the budget (60 KiB, issue 2/5).
# Usage: scripts/size.sh [PKG_DIR]   (env BUDGET_KIB overrides the budget)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkg="${1:-$root/pkg}"
budget_kib="${BUDGET_KIB:-60}"

gz() { gzip -9 -c "$1" | wc -c | tr -d ' '; }
kib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1024 }'; }

for f in idemkey_bg.wasm idemkey.js; do
  [[ -f "$pkg/$f" ]] || { echo "size: $pkg/$f is missing; run make build first" >&2; exit 1; }
done

wasm_raw=$(wc -c <"$pkg/idemkey_bg.wasm" | tr -d ' ')
js_raw=$(wc -c <"$pkg/idemkey.js" | tr -d ' ')
wasm_gz=$(gz "$pkg/idemkey_bg.wasm")
js_gz=$(gz "$pkg/idemkey.js")
sum=$((wasm_gz + js_gz))
budget=$((budget_kib * 1024))

printf '%-18s %10s %12s\n' "file" "raw" "gzip -9"
printf '%-18s %10s %8s KiB\n' "idemkey_bg.wasm" "$wasm_raw" "$(kib "$wasm_gz")"
printf '%-18s %10s %8s KiB\n' "idemkey.js" "$js_raw" "$(kib "$js_gz")"
printf '%-18s %10s %8s KiB  (budget %s KiB)\n' "total" "$((wasm_raw + js_raw))" "$(kib "$sum")" "$budget_kib"

if (( sum > budget )); then
  echo "size: over budget: $(kib "$sum") KiB gzip -9 > $budget_kib KiB" >&2
  exit 1
fi
echo "size: ok, $(kib "$sum") KiB of $budget_kib KiB"

#!/usr/bin/env bash
# Prints the gzip -9 sizes of what a page downloads to use idemkey: the release wasm, its
# JS glue (post-pack.sh joins the snippets wasm-bindgen writes beside it into it; were any
# left, each would be fetched and compressed on its own), and their sum, in KiB.
# Exits non-zero when the sum is over the budget, BUDGET_KIB: by default 31 KiB, lowered from
# 32 at 30.65 KiB (init() loads the wasm itself, no sweep() export, IndexedDB's sweep and the
# Checkout's getters read through one method each); 32 was lowered from 33 at 31.66 KiB (open() stores no key before the first submit: no proposal in Web Storage,
# no job that settles it); 33 was lowered from 35 at 32.39 KiB (Retry-After's HTTP-date read by the browser's Date.parse, rustc's MIR
# inliner); 35 was lowered from 38 at 34.61 KiB (docs/inside.md lists the steps from 37.25: the machine's queues in Vecs,
# no substring search, the driver's answers through one method, shared options); 38 was
# lowered from 42 when JSON went to the browser's JSON.parse and JSON.stringify (37.92 KiB; 40.79 before,
# with the storage lease gone and the key made by the uuid crate); 37.19 KiB with the
# storage backend passed as a number and the wasm built without reference types; 37.25 KiB
# with the IndexedDB sweep handed the page's record reader. 42 was raised from
# 40 for the ended mark that makes finish() and reset() durable and the bounded wait for
# another tab's lock (41.28 KiB; 1.34 KiB of it theirs; the storage lease, which is to go,
# weighs about as much). The module weighed 39.94 KiB with a retry's late wake checked against the deadline and the
# key's lifetime (0.11 KiB), a refused write's stale copy kept when it is the same
# attempt's (0.04 KiB) and an unreadable IndexedDB record giving way to a readable copy
# (0.05 KiB); 39.74 KiB with open()'s Web Storage test write made only where open() has
# no write of its own to learn from, its proposal looked for in every backend, and a
# pending record's copy written ahead of IndexedDB (0.27 KiB in all); 39.46 KiB with a freed Checkout's own error (freed.js: 0.17 KiB); 39.29
# KiB with its driver in three files (0.06 KiB less than in one); 39.35
# with the page's one storage listener (0.03 KiB); 39.32 KiB with
# the storage lease in IndexedDB (its read and its write in that read's transaction, one
# lease op at a time: 1.17 KiB) and a readonly read for a stored answer read without the
# lock; 38.07 KiB before, as a
# sans-IO machine with a thin driver, whose core alone reads records, canonical JSON and
# HTTP-dates; 38.24 before its boundary with JavaScript was
# thinned (strings cross as JsValues, no Closure, no Reflect) and before the record gained
# `submittedAt` (0.2 KiB); 31.9 before the machine (the browser read records, JSON and
# dates too, a second copy of each rule). `make bench` measures it against the 30 KiB it
# aims for.
# Usage: scripts/size.sh [PKG_DIR]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkg="${1:-$root/pkg}"
budget_kib="${BUDGET_KIB:-31}"

gz() { gzip -9 -c "$1" | wc -c | tr -d ' '; }
kib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1024 }'; }

for f in idemkey_bg.wasm idemkey.js; do
  [[ -f "$pkg/$f" ]] || { echo "size: $pkg/$f is missing; run make build first" >&2; exit 1; }
done

files=(idemkey_bg.wasm idemkey.js)
if [[ -d "$pkg/snippets" ]]; then
  while IFS= read -r f; do files+=("${f#"$pkg"/}"); done < <(find "$pkg/snippets" -name '*.js' | sort)
fi

raw_sum=0
gz_sum=0
printf '%-40s %10s %12s\n' "file" "raw" "gzip -9"
for f in "${files[@]}"; do
  raw=$(wc -c <"$pkg/$f" | tr -d ' ')
  g=$(gz "$pkg/$f")
  raw_sum=$((raw_sum + raw))
  gz_sum=$((gz_sum + g))
  printf '%-40s %10s %8s KiB\n' "$f" "$raw" "$(kib "$g")"
done
printf '%-40s %10s %8s KiB  (budget %s KiB)\n' "total" "$raw_sum" "$(kib "$gz_sum")" "$budget_kib"

# KiB may have decimals: compared in awk, not in bash's integer arithmetic.
if awk -v g="$gz_sum" -v b="$budget_kib" 'BEGIN { exit !(g > b * 1024) }'; then
  echo "size: over budget: $(kib "$gz_sum") KiB gzip -9 > $budget_kib KiB" >&2
  exit 1
fi
echo "size: ok, $(kib "$gz_sum") KiB of $budget_kib KiB"

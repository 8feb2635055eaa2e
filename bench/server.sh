#!/usr/bin/env bash
# The server part of `make bench`, with wrk (Debian): replays against GET /healthz, and new
# charges against the raw commit rate of the same database (one single-row INSERT + COMMIT per
# iteration, same durability), on SQLite and on PostgreSQL; and idemkey-axum's overhead: the
# example shop's POST /orders against its POST /bare/orders, the same order and write without
# the crate, on the same database, in each of the crate's modes (two commits; one, for a
# provider that deduplicates: the shop's --provider-dedups), with the syncs and round trips one
# request of each route waits for (counted with strace). Every rate is a ratio against its
# baseline measured in the same run. Writes the tables to $1 (default target/bench/server.md)
# and $2 (default target/bench/crate.md). BENCH_ONLY=crate measures the crate's table alone
# (`make bench-crate`).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-target/bench/server.md}"
CRATE_OUT="${2:-target/bench/crate.md}"
BIN="${IDEMKEY_SERVER:-target/release/idemkey-server}"
SHOP="${IDEMKEY_SHOP:-target/release/orders}"
DUR="${BENCH_SECONDS:-5}"
CONNS="${BENCH_CONNECTIONS:-16}"
ROUNDS="${BENCH_ROUNDS:-4}"
ROUND_SECONDS="${BENCH_ROUND_SECONDS:-3}"
ONLY="${BENCH_ONLY:-}"
# The shop's mode: empty for two commits, --provider-dedups for one.
SHOP_MODE=""
PG_BIN=/usr/lib/postgresql/15/bin
mkdir -p "$(dirname "$OUT")"

dir="$(mktemp -d /tmp/idemkey-bench-XXXXXX)"
chmod 755 "$dir"  # postgres must reach its data directory inside
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

# Requests per second that wrk reports.
rate() { wrk -t2 -c"$CONNS" -d"${DUR}s" "$@" | awk '/^Requests\/sec:/ { printf "%.0f", $2 }'; }

start_server() {
  # Emptied first: the last run's "listening" line must not answer for this one.
  : >"$dir/server.out"
  "$BIN" --addr 127.0.0.1:0 --log-level error --provider-latency-ms 0 --no-receipt-worker \
    --provider-db "$dir/provider.db" "$@" >"$dir/server.out" 2>"$dir/server.log" &
  server_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^listening on http://' "$dir/server.out" 2>/dev/null && break
    sleep 0.1
  done
  addr="$(sed -n 's|^listening on http://||p' "$dir/server.out")"
  [ -n "$addr" ] || { cat "$dir/server.log" >&2; exit 1; }
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

# One store: healthz, replays, new charges; prints "healthz replays charges".
measure() {
  start_server "$@"
  curl -fsS -XPOST "http://$addr/api/charges" -H 'Content-Type: application/json' \
    -H 'X-Customer-Id: bench' -H 'Idempotency-Key: bench-replay' -d '{"amount":4200,"currency":"usd"}' >/dev/null
  local h r c
  h="$(rate "http://$addr/healthz")"
  r="$(rate -s bench/wrk/replay.lua "http://$addr/api/charges")"
  c="$(rate -s bench/wrk/charge.lua "http://$addr/api/charges" 2>"$dir/wrk.err")"
  if grep -q 'unexpected status' "$dir/wrk.err"; then
    echo "bench: some charges were not 201:" >&2; sort "$dir/wrk.err" | uniq -c >&2
  fi
  stop_server
  echo "$h $r $c"
}

# The shop on database $1 (its provider answers at once), run by the command before it if any.
start_shop() {
  local db="$1"; shift
  : >"$dir/shop.out"  # as in start_server
  "$@" "$SHOP" --database "$db" --provider instant --secret "make bench's fingerprint secret, 32 bytes" \
    $SHOP_MODE >"$dir/shop.out" 2>"$dir/shop.log" &
  server_pid=$!
  for _ in $(seq 1 100); do
    grep -q '^listening on http://' "$dir/shop.out" 2>/dev/null && break
    sleep 0.1
  done
  addr="$(sed -n 's|^listening on http://||p' "$dir/shop.out")"
  [ -n "$addr" ] || { cat "$dir/shop.log" >&2; exit 1; }
}

# The shop on one database; prints "bare new replays".
measure_shop() {
  start_shop "$1"
  curl -fsS -XPOST "http://$addr/orders" -H 'Content-Type: application/json' \
    -H 'X-Customer-Id: bench' -H 'Idempotency-Key: bench-replay' -d '{"amount":4200,"currency":"usd"}' >/dev/null
  # Bare and keyed take turns (ROUNDS of ROUND_SECONDS each), so that a change in the load
  # of a shared machine falls on both alike; each figure is the mean of its rounds.
  local b=0 n=0 r i
  : >"$dir/wrk.err"
  for i in $(seq 1 "$ROUNDS"); do
    b=$((b + $(DUR="$ROUND_SECONDS" rate -s bench/wrk/charge.lua "http://$addr/bare/orders" 2>>"$dir/wrk.err")))
    n=$((n + $(DUR="$ROUND_SECONDS" rate -s bench/wrk/charge.lua "http://$addr/orders" 2>>"$dir/wrk.err")))
  done
  b=$((b / ROUNDS)); n=$((n / ROUNDS))
  r="$(rate -s bench/wrk/replay.lua "http://$addr/orders")"
  if grep -q 'unexpected status' "$dir/wrk.err"; then
    echo "bench: some orders were not 201:" >&2; sort "$dir/wrk.err" | uniq -c >&2
  fi
  stop_server
  echo "$b $n $r"
}

# What one request of each route waits for, in a pass of its own after the rates: a fresh shop
# per route and mode under strace (which stops it at the calls it counts only), one connection
# for ROUND_SECONDS, so that no request shares a sync with another. Its syncs to disk (SQLite:
# the shop's fdatasync and fsync calls; PostgreSQL: its WAL flushes, from pg_stat_wal once the
# shop's connections have closed) and, on PostgreSQL, its round trips to the database (the
# shop's sendto calls). Prints "syncs trips" per request for the bare route, keyed with two
# commits and keyed with one, in that order.
per_request() {
  local db="$1" pass route n trips syncs w0 out
  for pass in bare two one; do
    route=/orders; SHOP_MODE=""
    [ "$pass" = bare ] && route=/bare/orders
    [ "$pass" = one ] && SHOP_MODE=--provider-dedups
    w0="$(wal_syncs)"
    start_shop "$db" strace -f -qq --seccomp-bpf -e trace=fdatasync,fsync,sendto -e signal=none -o "$dir/trace"
    out="$(wrk -t1 -c1 -d"${ROUND_SECONDS}s" -s bench/wrk/charge.lua "http://$addr$route" 2>>"$dir/wrk.err")"
    # The shop itself is stopped (strace, stopped, would leave it running), and strace ends with it.
    kill "$(pgrep -P "$server_pid")"; wait "$server_pid" 2>/dev/null || true; server_pid=""
    n="$(awk '/ requests in / { print $1 }' <<<"$out")"
    trips="$(grep -c '^[0-9]* *sendto(' "$dir/trace" || true)"
    if [ -n "$pg_port" ]; then
      sleep 1  # the backends of the shop's connections report their statistics as they exit
      syncs=$(( $(wal_syncs) - w0 ))
    else
      syncs="$(grep -cE '^[0-9]* *f(data)?sync\(' "$dir/trace" || true)"
    fi
    printf '%s %s ' "$(ratio "$syncs" "$n")" "$(ratio "$trips" "$n")"
  done
  echo
  SHOP_MODE=""
}
pg_port=""
wal_syncs() { [ -n "$pg_port" ] && psql -d postgres -Atc 'SELECT wal_sync FROM pg_stat_wal' || echo 0; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# SQLite: the server on a fresh file, the raw loop on another file in the same directory.
if [ "$ONLY" != crate ]; then
  read -r s_health s_replay s_charge < <(measure --db "$dir/idemkey.db")
  s_commit="$(python3 bench/commit_rate.py "$dir/raw.db" "$DUR")"
fi
read -r sb_bare sb_new sb_replay < <(measure_shop "sqlite:$dir/shop.db")
read -r s1_bare s1_new s1_replay < <(SHOP_MODE=--provider-dedups measure_shop "sqlite:$dir/shop-one.db")
read -r sb_syncs _ sn_syncs _ s1_syncs _ < <(per_request "sqlite:$dir/shop-syncs.db")

# PostgreSQL: its default (durable) settings, on a temporary directory, as postgres.
mkdir -p "$dir/pg"; chown postgres "$dir/pg"
runuser -u postgres -- "$PG_BIN/initdb" -D "$dir/pg/data" -A trust -U postgres >/dev/null
pg_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" \
  -o "-k $dir/pg -p $pg_port -c listen_addresses=127.0.0.1" -w start >/dev/null
psql() { "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pg_port" -U postgres "$@"; }
psql -d postgres -c 'CREATE DATABASE idemkey' -c 'CREATE DATABASE raw' -c 'CREATE DATABASE shop' \
  -c 'CREATE DATABASE shop_one' -c 'CREATE DATABASE shop_syncs'
pg_url="postgres://postgres@127.0.0.1:$pg_port"
if [ "$ONLY" != crate ]; then
  read -r p_health p_replay p_charge < <(measure --database-url "$pg_url/idemkey")
fi
read -r pb_bare pb_new pb_replay < <(measure_shop "$pg_url/shop")
read -r p1_bare p1_new p1_replay < <(SHOP_MODE=--provider-dedups measure_shop "$pg_url/shop_one")
read -r pb_syncs pb_trips pn_syncs pn_trips p1_syncs p1_trips < <(per_request "$pg_url/shop_syncs")
if [ "$ONLY" != crate ]; then
  psql -d raw -c 'CREATE TABLE t (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)'
  echo "INSERT INTO t (v) VALUES (repeat('x', 64));" >"$dir/insert.sql"
  p_commit="$("$PG_BIN/pgbench" -n -h 127.0.0.1 -p "$pg_port" -U postgres -c 1 -T "$DUR" -f "$dir/insert.sql" raw 2>/dev/null \
    | awk '/^tps = / { printf "%.0f", $3 }')"
fi

if [ "$ONLY" != crate ]; then
{
  echo "## Server throughput (wrk, $CONNS connections, ${DUR} s each; $(nproc) cores)"
  echo
  echo "| store | GET /healthz /s | replays /s | replays / healthz | new charges /s | raw INSERT+COMMIT /s | charges / raw commit |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  echo "| SQLite (WAL, synchronous=FULL) | $s_health | $s_replay | $(ratio "$s_replay" "$s_health") | $s_charge | $s_commit | $(ratio "$s_charge" "$s_commit") |"
  echo "| PostgreSQL 15 (default durable commit) | $p_health | $p_replay | $(ratio "$p_replay" "$p_health") | $p_charge | $p_commit | $(ratio "$p_charge" "$p_commit") |"
  echo
  echo "Targets: replays / healthz >= 0.6; charges / raw commit >= 0.3. A charge makes three durable"
  echo "commits (the reservation, the provider's payment, phase 3); the server commits the writes that"
  echo "queue while a commit syncs together (SQLite: its writer batches them; PostgreSQL: its WAL"
  echo "flush). The raw loop is one client committing single-row inserts with the same durability"
  echo "(SQLite: WAL, synchronous=FULL, fdatasync; PostgreSQL: its defaults); the provider stand-in"
  echo "answers at once (its own SQLite file, as durable)."
} >"$OUT"
cat "$OUT"
fi

{
  echo "## idemkey-axum's overhead (the example shop, wrk, $CONNS connections; bare and keyed in $ROUNDS alternating rounds of ${ROUND_SECONDS} s, replays ${DUR} s; $(nproc) cores)"
  echo
  echo "| store | mode | bare POST /bare/orders /s | keyed new orders /s | new / bare | replays /s | replays / bare | syncs / request, bare | keyed | round trips / request, bare | keyed |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  echo "| SQLite (WAL, synchronous=FULL) | two commits | $sb_bare | $sb_new | $(ratio "$sb_new" "$sb_bare") | $sb_replay | $(ratio "$sb_replay" "$sb_bare") | $sb_syncs | $sn_syncs | - | - |"
  echo "| SQLite (WAL, synchronous=FULL) | one commit (provider deduplicates) | $s1_bare | $s1_new | $(ratio "$s1_new" "$s1_bare") | $s1_replay | $(ratio "$s1_replay" "$s1_bare") | $sb_syncs | $s1_syncs | - | - |"
  echo "| PostgreSQL 15 (default durable commit) | two commits | $pb_bare | $pb_new | $(ratio "$pb_new" "$pb_bare") | $pb_replay | $(ratio "$pb_replay" "$pb_bare") | $pb_syncs | $pn_syncs | $pb_trips | $pn_trips |"
  echo "| PostgreSQL 15 (default durable commit) | one commit (provider deduplicates) | $p1_bare | $p1_new | $(ratio "$p1_new" "$p1_bare") | $p1_replay | $(ratio "$p1_replay" "$p1_bare") | $pb_syncs | $p1_syncs | $pb_trips | $p1_trips |"
  echo
  echo "Targets: new / bare >= 0.5 with two commits, >= 0.85 with one (and as many syncs per"
  echo "request as the bare route); replays / bare >= 4. Both routes take the same body, pay at the"
  echo "same provider (in process, answering at once) and insert the same order in one durable"
  echo "transaction; each mode's keyed rate is measured against the bare rate taking turns with it."
  echo "With two commits the keyed route adds the reservation, one INSERT ... ON CONFLICT DO NOTHING"
  echo "that must be durable before the provider is called, and the stored answer, which rides the"
  echo "order's transaction: a keyed request waits for two durable commits in a row where a bare one"
  echo "waits for one. With one (Idempotency::provider_deduplicates: the operation id derived from the"
  echo "key, a provider that deduplicates by it) the key is held by a lock that writes nothing (SQLite:"
  echo "the shop's map of held keys; PostgreSQL: an advisory lock of the transaction that then commits"
  echo "the order), and the stored answer rides the order's commit, the only one."
  echo "Syncs and round trips per request come from a pass of their own, one connection at a time so"
  echo "that no request shares a sync (a fresh shop per route and mode, ${ROUND_SECONDS} s each, under"
  echo "strace): SQLite's are the fdatasync calls of the shop, PostgreSQL's its WAL flushes"
  echo "(pg_stat_wal); round trips are the shop's messages to PostgreSQL. With $CONNS connections the"
  echo "syncs are shared (SQLite's one writer commits together the writes that queue while it syncs,"
  echo "PostgreSQL flushes the commits that wait together). Replays are answered from the replay cache"
  echo "of completed answers (default 10,000) after the first look-up."
} >"$CRATE_OUT"
cat "$CRATE_OUT"

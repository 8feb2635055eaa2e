#!/usr/bin/env bash
# make cluster: PostgreSQL on a temporary directory (as the postgres user), the
# provider service, three instances on that database and nginx round-robin in
# front of them on ADDR (the demo's address), each sending CSP (the demo's
# Content-Security-Policy, as `make demo` does) with every page and file. Prints the URL;
# Ctrl-C stops it all. Usage: scripts/cluster.sh [ADDR [CSP]]
set -euo pipefail
ADDR="${1:-127.0.0.1:8080}"
CSP="${2:-}"
csp_args=()
[ -z "$CSP" ] || csp_args=(--csp "$CSP")
BIN="${IDEMKEY_SERVER:-target/release/idemkey-server}"
PG_BIN=/usr/lib/postgresql/15/bin
ROOT="$(pwd)"

dir="$(mktemp -d /tmp/idemkey-cluster-XXXXXX)"
chmod 755 "$dir"  # postgres must reach its data directory inside
# Every process started here, one pid a line ($(start …) runs in a subshell,
# so a shell array would lose them).
touch "$dir/pids"
cleanup() {
  trap - INT TERM EXIT
  local p
  while read -r p; do kill "$p" 2>/dev/null || true; done <"$dir/pids"
  while read -r p; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done <"$dir/pids"
  if [ -f "$dir/pg/data/postmaster.pid" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  echo "cluster stopped"
}
trap cleanup INT TERM EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts "$@" in the background with its stderr in $dir/$name.log and prints
# the address of its "listening on http://ADDR" line.
start() {
  local name="$1"; shift
  "$@" >"$dir/$name.out" 2>"$dir/$name.log" &
  local pid=$!
  echo "$pid" >>"$dir/pids"
  local i
  for i in $(seq 1 100); do
    if grep -q '^listening on http://' "$dir/$name.out" 2>/dev/null; then
      sed -n 's|^listening on http://||p' "$dir/$name.out"; return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "cluster: $name did not start:" >&2; cat "$dir/$name.log" >&2; exit 1
}

# PostgreSQL refuses to run as root: initdb and pg_ctl as postgres, default
# (durable) settings, TCP on a free loopback port only.
mkdir -p "$dir/pg"; chown postgres "$dir/pg"
runuser -u postgres -- "$PG_BIN/initdb" -D "$dir/pg/data" -A trust -U postgres >"$dir/initdb.log"
pg_port="$(free_port)"
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" \
  -o "-k $dir/pg -p $pg_port -c listen_addresses=127.0.0.1" -w start >/dev/null
"$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -c 'CREATE DATABASE idemkey'
url="postgres://postgres@127.0.0.1:$pg_port/idemkey"

provider="$(start provider "$BIN" provider --addr 127.0.0.1:0 --db "$dir/provider.db" --latency-ms 300)"
upstreams=""
for n in 1 2 3; do
  a="$(start "instance-$n" "$BIN" --addr 127.0.0.1:0 --database-url "$url" \
        --provider-url "http://$provider" --instance "instance-$n" \
        --static "$ROOT/www" --pkg "$ROOT/pkg" --faults "${csp_args[@]}")"
  upstreams+="    server $a max_fails=0;"$'\n'
done

# nginx in the foreground of its own prefix; every request goes to the next
# instance. A POST is never re-sent to another instance by nginx itself
# (non_idempotent is off): retrying is the client's job, with its key.
cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/nginx-body;
  proxy_temp_path $dir/nginx-proxy;
  fastcgi_temp_path $dir/nginx-fastcgi;
  uwsgi_temp_path $dir/nginx-uwsgi;
  scgi_temp_path $dir/nginx-scgi;
  # max_fails=0: a dropped connection (a fault, a killed instance) must not take an
  # instance out of the rotation; with all three out, nginx answers 502 to everything.
  upstream idemkey {
$upstreams  }
  server {
    listen $ADDR;
    location / {
      proxy_pass http://idemkey;
      proxy_http_version 1.1;
      proxy_set_header Host \$host;
      proxy_set_header Connection "";
      proxy_next_upstream off;
    }
  }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" &
nginx_pid=$!
echo "$nginx_pid" >>"$dir/pids"
for i in $(seq 1 50); do
  curl -fsS "http://$ADDR/healthz" >/dev/null 2>&1 && break
  kill -0 "$nginx_pid" 2>/dev/null || { echo "cluster: nginx did not start:" >&2; cat "$dir/nginx-error.log" >&2; exit 1; }
  sleep 0.1
done

echo
echo "  idemkey cluster:  http://$ADDR/"
echo "  3 instances on PostgreSQL ($url), provider at http://$provider, nginx round-robin"
echo "  (Ctrl-C stops everything; logs in $dir)"
echo
wait "$nginx_pid"

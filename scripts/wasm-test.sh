#!/usr/bin/env bash
# Browser tests of the idemkey crate (tests/web/, wasm-bindgen-test) in headless Chromium,
# headless Firefox ESR and WebKit (WebKitGTK's MiniBrowser, driven by Debian's
# WebKitWebDriver in a virtual X display: it has no headless mode), against the real
# reference server, which this script starts and always stops (IDEMKEY_SERVER names the
# binary; without it the script builds one). The tests are one test binary, run in one page
# per browser (tests/web/main.rs says why), the three browsers side by side. Extra
# arguments go to `wasm-pack test` (e.g. `--test web -- submit::` runs the tests of
# tests/web/submit.rs); IDEMKEY_BROWSERS="chrome" (or "firefox", "webkit", or any of
# them) runs those browsers only.
# The tests run the package in pkg/ as `make build` leaves it (tests/support/page.js imports
# pkg/idemkey.js, which the test runner serves from this directory, and its init() loads
# idemkey_bg.wasm from beside it): run `make build` first (`make test-wasm` does).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
target="${CARGO_TARGET_DIR:-target}"

# A pkg/ that is missing, or older than what it is built from, would test other code than
# the sources': refuse it rather than pass or fail on it.
for f in pkg/idemkey.js pkg/idemkey_bg.wasm; do
  if [ ! -s "$f" ]; then
    echo "wasm-test: $f is missing: the browser tests run the built package; run \`make build\` first" >&2
    exit 1
  fi
done
# The test binaries link the crate's pure core alone, the tests' reference
# (--no-default-features leaves out the `browser` feature: its surface and driver, whose JS
# files a test page would fetch too, and the test runner's server stalls a page that opens
# more than four connections at once). The tests reach the module through
# tests/support/shipped.rs only; a test naming the crate's own surface is refused here too.
if grep -rnE --include='*.rs' 'idemkey::(\{[^}]*)?\b(Checkout|new_key)\b' tests >&2; then
  echo "wasm-test: the lines above use the crate's own browser code; use the shipped module's (tests/support/shipped.rs)" >&2
  exit 1
fi
stale="$(find src Cargo.toml scripts/post-pack.sh scripts/short-names.mjs -type f \
  \( -newer pkg/idemkey.js -o -newer pkg/idemkey_bg.wasm \) -print -quit)"
if [ -n "$stale" ]; then
  echo "wasm-test: $stale changed after pkg/ was built: run \`make build\` first" >&2
  exit 1
fi

# IDEMKEY_SERVER: a server binary already built (make test-wasm passes the one the host tests
# built); without it, this script builds the debug one.
server="${IDEMKEY_SERVER:-}"
if [ -z "$server" ]; then
  cargo build -p idemkey-server
  server="$target/debug/idemkey-server"
fi

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

"$server" --addr 127.0.0.1:0 --db "$tmp/t.db" --faults --cors \
  --provider-latency-ms 50 --lock-timeout 2s >"$tmp/out" 2>"$tmp/err" &
server_pid=$!

url=""
for _ in $(seq 1 300); do
  line="$(grep -m1 '^listening on http://' "$tmp/out" || true)"
  if [ -n "$line" ]; then url="${line#listening on }"; break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "wasm-test: the reference server did not start" >&2
  cat "$tmp/out" "$tmp/err" >&2
  exit 1
fi
echo "wasm-test: reference server at $url"

# The tests read it at compile time (env!): without it they do not build.
export IDEMKEY_TEST_SERVER="$url"
# The runner gives a test binary 20 s by default, for all of its tests; the one binary's
# took 36 to 55 s per browser on a shared 2-core machine, and a loaded CI machine can need
# several times that. A binary that hangs still fails, after this many seconds.
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-600}"
# One engine's run of the tests (the names are checked below, before any runs).
run_in() {
  case "$1" in
    chrome) wasm-pack test --headless --chrome --chromedriver /usr/bin/chromedriver --no-default-features "${@:2}" ;;
    firefox) wasm-pack test --headless --firefox --geckodriver "$(command -v geckodriver)" --no-default-features "${@:2}" ;;
    # The test runner speaks to WebKitWebDriver as it does to Safari's safaridriver (the
    # same W3C protocol, an empty capability set that makes it start MiniBrowser).
    webkit) xvfb-run -a -s '-screen 0 1280x1024x24' \
      wasm-pack test --headless --safari --safaridriver /usr/bin/WebKitWebDriver --no-default-features "${@:2}" ;;
  esac
}

browsers="${IDEMKEY_BROWSERS:-chrome firefox webkit}"
for browser in $browsers; do
  case "$browser" in
    chrome) ;;
    firefox)
      if ! command -v geckodriver >/dev/null; then
        echo "wasm-test: geckodriver is missing (make tools installs it)" >&2
        exit 1
      fi ;;
    webkit)
      if [ ! -x /usr/bin/WebKitWebDriver ] || ! command -v xvfb-run >/dev/null; then
        echo "wasm-test: WebKitWebDriver or xvfb-run is missing (make tools installs webkit2gtk-driver xvfb xauth)" >&2
        exit 1
      fi ;;
    *) echo "wasm-test: unknown browser $browser (chrome, firefox or webkit)" >&2; exit 1 ;;
  esac
done

# The engines run side by side (scripts/together.sh), each in its own browser and page
# against the one server (every test makes customer ids of its own): most of an engine's time
# is the tests' waits (retries' backoff, deadlines, timeouts). One after another, the three
# took 32, 35 and 45 s of tests here, and the whole run 131 s. The first run to reach cargo
# builds the test binaries; the others wait for its lock and find them built.
export -f run_in
args=""
[ "$#" -eq 0 ] || args="$(printf ' %q' "$@")"
runs=()
for browser in $browsers; do
  runs+=("run_in $browser$args")
done
bash scripts/together.sh "${runs[@]}"

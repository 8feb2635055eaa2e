#!/usr/bin/env bash
# The npm consumer tests (`make test-consumer`, after `make build` and `make server`):
# pack pkg/ into pkg/idemkey-<version>.tgz, then node's test runner installs it into
# fresh directories and checks the package, the bundlers (Vite, esbuild, webpack, Rollup),
# the no-bundler page, the framework apps (React, Next.js, Vue, Svelte), the TypeScript
# types and the documents (README.md, docs/). A missing tool is an error, never a skip.
# KEEP_CONSUMER=1 keeps the temporary projects for inspection; IDEMKEY_PKG=DIR tests
# another wasm-pack output directory than pkg/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

fail() { echo "test-consumer: $*" >&2; exit 1; }
for tool in node npm tar gzip; do
  command -v "$tool" >/dev/null || fail "$tool not found on PATH"
done
for bin in vite esbuild webpack rollup tsc; do
  [[ -x node_modules/.bin/$bin ]] || fail "node_modules/.bin/$bin missing: run \`npm ci\` (make tool-npm)"
done
[[ -d node_modules/playwright-core ]] || fail "playwright-core missing: run \`npm ci\` (make tool-npm)"
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || fail "${CHROMIUM:-/usr/bin/chromium} missing (make tool-apt)"
server="${IDEMKEY_SERVER:-$root/target/release/idemkey-server}"
[[ -x $server ]] || fail "$server missing: run \`make server\`"
pkg="${IDEMKEY_PKG:-$root/pkg}"   # another build's output, for development
[[ -f $pkg/package.json && -f $pkg/idemkey_bg.wasm ]] || fail "$pkg is not built: run \`make build\`"

version="$(sed -n '/^\[package\]/,/^\[/{s/^version *= *"\([^"]*\)".*/\1/p}' Cargo.toml | head -n1)"
[[ -n $version ]] || fail "no [package] version in Cargo.toml"
tgz="$pkg/idemkey-$version.tgz"
rm -f "$pkg"/idemkey-*.tgz
# What `wasm-pack pack` does (npm pack in the directory), for any directory: wasm-pack pack
# only finds a directory named pkg/ under a crate.
(cd "$pkg" && npm pack --loglevel=warn >/dev/null)
[[ -f $tgz ]] || fail "npm pack did not write $tgz"
echo "test-consumer: packed $tgz"

export IDEMKEY_TGZ="$tgz" IDEMKEY_SERVER="$server" IDEMKEY_DTS="$pkg/idemkey.d.ts"
exec node --test --test-concurrency=1 \
  tests/consumer/package.test.mjs \
  tests/consumer/types.test.mjs \
  tests/consumer/browser.test.mjs \
  tests/consumer/frameworks.test.mjs \
  tests/consumer/docs.test.mjs

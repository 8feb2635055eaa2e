#!/usr/bin/env bash
# `make bench`: sizes, client overhead and server throughput, each against a baseline measured
# side by side in the same run. Writes target/bench/results.md and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/bench
node bench/bench.mjs target/bench/results.md
# Server throughput with wrk (a Node fetch loop tops out below what the server does).
bash bench/server.sh target/bench/server.md target/bench/crate.md
cat target/bench/server.md target/bench/crate.md >> target/bench/results.md
echo
cat target/bench/results.md

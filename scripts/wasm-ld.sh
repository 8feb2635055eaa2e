#!/usr/bin/env bash
# The linker of the wasm32 builds (.cargo/config.toml): rustc's own rust-lld, given what rustc
# gives it, except one export. js-sys exports `__wbg_jspi_task_poll` (JS Promise Integration's
# poll trampoline) from every module that links it. wasm-bindgen deletes that export when the
# module has no JSPI exports, as this one has none, but by then the linker has kept what the
# trampoline reached: a RefCell's panic messages, with `core::fmt`'s padding code behind them,
# reachable only through the function table, where wasm-opt cannot drop them. Not exporting it
# at link time lets the linker drop all of it: 0.97 KiB of gzipped wasm.
set -euo pipefail
rustc="${RUSTC:-rustc}"
host="$("$rustc" -vV | sed -n 's/^host: //p')"
lld="$("$rustc" --print sysroot)/lib/rustlib/$host/bin/rust-lld"
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--export" ] && [ "${2:-}" = "__wbg_jspi_task_poll" ]; then
    shift 2
    continue
  fi
  args+=("$1")
  shift
done
exec "$lld" "${args[@]}"

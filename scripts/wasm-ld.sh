#!/usr/bin/env bash
# The linker of the wasm32 builds (.cargo/config.toml): rustc's own rust-lld, given what rustc
# gives it, except one export. js-sys exports `__wbg_jspi_task_poll` (JS Promise Integration's
# poll trampoline) from every module that links it. wasm-bindgen deletes that export when the
# module has no JSPI exports, as this one has none, but by then the linker has kept what the
# trampoline reached: a RefCell's panic messages, with `core::fmt`'s padding code behind them,
# reachable only through the function table, where wasm-opt cannot drop them. Not exporting it
# at link time lets the linker drop all of it: 0.97 KiB of gzipped wasm.
# wasm-bindgen keeps the export only for a module with `#[wasm_bindgen]` JSPI exports that
# links js-sys's JSPI spawn; such a module could not link through this script. `make pack`'s
# size budget fails if the export comes back (a form of the argument this does not know).
# rustc runs its linker with its own lib/rustlib/<host>/bin first on PATH, so `rust-lld` is
# the one of the toolchain that is linking.
set -euo pipefail
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --export=__wbg_jspi_task_poll) shift ;;
    --export)
      if [ "${2:-}" = "__wbg_jspi_task_poll" ]; then shift 2; else args+=("$1"); shift; fi ;;
    *) args+=("$1"); shift ;;
  esac
done
exec rust-lld "${args[@]}"

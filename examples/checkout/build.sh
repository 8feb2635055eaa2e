#!/usr/bin/env bash
# Builds examples/checkout with each bundler into dist-vite/ and dist-esbuild/.
# The consumer test runs it in a fresh project that installed the idemkey tarball,
# with vite and esbuild on PATH.
set -euo pipefail
# #region vite
vite build --outDir dist-vite
# #endregion vite
# #region esbuild
esbuild checkout.js --bundle --format=esm --outdir=dist-esbuild
# esbuild leaves `new URL("idemkey_bg.wasm", import.meta.url)` alone:
# put the wasm (and the page) beside the bundle.
cp node_modules/idemkey/idemkey_bg.wasm index.html dist-esbuild/
# #endregion esbuild

#!/usr/bin/env bash
# Builds examples/checkout with each bundler into dist-vite/, dist-esbuild/,
# dist-webpack/ and dist-rollup/. The consumer test runs it in a fresh project that
# installed the idemkey tarball, with vite, esbuild, webpack and rollup on PATH.
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
# #region webpack
webpack --config webpack.config.js
cp index.html dist-webpack/
# #endregion webpack
# #region rollup
rollup --config rollup.config.js
cp node_modules/idemkey/idemkey_bg.wasm index.html dist-rollup/
# #endregion rollup

// Rollup builds the checkout into dist-rollup/; node-resolve finds "idemkey" in
// node_modules. Rollup leaves `new URL("idemkey_bg.wasm", import.meta.url)` alone, so
// build.sh copies the wasm beside the bundle.
import { nodeResolve } from "@rollup/plugin-node-resolve";

export default {
  input: "checkout.js",
  output: { dir: "dist-rollup", format: "es" },
  plugins: [nodeResolve()],
};

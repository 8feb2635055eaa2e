// webpack 5 builds the checkout into dist-webpack/: it sees the glue's
// `new URL("idemkey_bg.wasm", import.meta.url)` and emits the wasm as an asset.
import { fileURLToPath } from "node:url";

export default {
  mode: "production",
  entry: "./checkout.js",
  output: {
    path: fileURLToPath(new URL("dist-webpack", import.meta.url)),
    filename: "checkout.js",
    // The wasm is found next to the bundle, whatever URL the page is served from.
    publicPath: "auto",
    clean: true,
  },
};

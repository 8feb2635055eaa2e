// The getters of the package's `Checkout` class, each a read through the wasm's one
// `__view(n)` (src/api.rs, `view`: the numbers are the places of these names): a getter
// exported by the wasm each costs it a borrow-checked entry of its own and the glue a
// wrapper (0.2 KiB gzipped for the seven). src/api.rs's TypeScript section declares them.
// scripts/post-pack.sh applies it to the package's class, before freed.js's guard; it is
// no wasm-bindgen snippet, since the wasm never calls it.
const NAMES = ["key", "scope", "state", "attempts", "createdAt", "expiresAt", "storage"];

/** Defines the getters on class `cls` (wasm-bindgen's `Checkout`), as a class's own are. */
export function defineGetters(cls) {
  NAMES.forEach((name, n) =>
    Object.defineProperty(cls.prototype, name, { get() { return this.__view(n); }, configurable: true }));
}

// A `Checkout` used after it was freed (`free()`, the end of its `using` block, or a
// component's clean-up that freed it while a handler still held it): every method and
// getter throws the `freed` IdemError, which says what to do, where wasm-bindgen's glue
// would throw "null pointer passed to rust"; and `free()` once more does nothing, as
// disposing twice does elsewhere. scripts/post-pack.sh applies it to the package's class;
// it is no wasm-bindgen snippet, since the wasm never calls it.
import { idemError } from "./driver.js";

/** Guards the methods and getters of class `cls` (wasm-bindgen's, `__wbg_ptr` 0 once freed). */
export function guardFreed(cls) {
  const proto = cls.prototype, free = proto.free;
  for (const name of Reflect.ownKeys(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name), f = d.get || d.value;
    if (name == "constructor" || name == "__destroy_into_raw" || typeof f != "function") continue;
    d[d.get ? "get" : "value"] = function (...args) {
      if (this.__wbg_ptr) return f.apply(this, args);
      // `free()` and `Symbol.dispose` (the same function) once more do nothing.
      if (f != free) throw idemError(`this ${cls.name} was freed: open its scope again with ${cls.name}.open()`, "freed");
    };
    Object.defineProperty(proto, name, d);
  }
}

// The sweep rule as the driver's `idbSweep` calls it, `due(key, value)`: a `Due`'s method
// (src/browser/ffi.rs) as a function, made here rather than through a getter and `bind`
// imports, which weigh more in the glue. Joined into idemkey.js by scripts/post-pack.sh.

/** `d.due` (`d` a `Due`) as a function of `(key, value)`. */
export const due = (d) => (key, value) => d.due(key, value);

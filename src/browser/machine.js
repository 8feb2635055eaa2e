// The module's objects as the driver calls them (src/browser/ffi.rs makes both):
//
//   a scope's machine  driver.js calls `d.m.answer(...)`, `d.m.woken(code)` and the like,
//                      and `d.m.free()`: one named method per answer of the browser, each
//                      calling the wasm's one `feed` export (`Machine::feed`) with the
//                      answer's number there, a number and up to three values. One export
//                      instead of ten: each export of a class costs the wasm its own borrow
//                      checks and error paths, and the glue its own wrapper (0.6 KiB of
//                      gzipped module for the ten).
//   the sweep rule     `idbSweep` calls `due(key, value)`: a `Due`'s method as a function.
//
// Joined into idemkey.js by scripts/post-pack.sh.

/** `m` (a `Machine`) with the driver's named methods. */
export function named(m) {
  return {
    lockGranted: () => m.feed(0),
    lockRefused: () => m.feed(1),
    idbRead: (value, error) => m.feed(2, 0, value, error),
    idbWritten: (error) => m.feed(3, 0, error),
    idbReopened: (reason) => m.feed(4, 0, reason),
    answer: (status, body, retryAfter, replayed) => m.feed(5, status, body, retryAfter, replayed),
    noAnswer: (timedOut) => m.feed(6, timedOut ? 1 : 0),
    woken: (code) => m.feed(7, code),
    notice: (text) => m.feed(8, 0, text),
    storageEvent: (value, old) => m.feed(9, 0, value, old),
    free: () => m.free(),
  };
}

/** `d.due` (`d` a `Due`) as a function of `(key, value)`. */
export const due = (d) => (key, value) => d.due(key, value);

// A scope's machine as the driver holds it (src/browser/driver.js calls `d.m.answer(...)`,
// `d.m.woken(code)` and the like, and `d.m.free()`): one named method per answer of the
// browser, each calling the wasm's one `feed` export (src/browser/ffi.rs, `Machine::feed`)
// with the answer's number there, a number and up to three values. One export instead of
// ten: each export of a class costs the wasm its own borrow checks and error paths, and
// the glue its own wrapper (0.7 KiB of gzipped module for the ten). Joined into idemkey.js
// by scripts/post-pack.sh.

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

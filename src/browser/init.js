// The package's `init()`: wasm-bindgen's loader (`load`), with the two refusals a payment
// page needs told apart from a broken download. scripts/post-pack.sh makes this the
// default export of idemkey.js; it is no wasm-bindgen snippet, since the wasm never calls it.
//
//   integrity  `init({ integrity: "sha384-..." })` hashes the wasm's bytes before any of
//              them is compiled, as `<script integrity>` does for the JS (one SRI hash:
//              `sha256-`, `sha384-` or `sha512-` and the digest in base64); a mismatch
//              rejects with `wasm-integrity`. `instantiateStreaming` has no integrity
//              argument, so these bytes are compiled with `instantiate`.
//   CSP        a Content-Security-Policy whose script-src lacks 'wasm-unsafe-eval' makes
//              the browser refuse wasm with a CompileError (Chromium's text points at
//              'unsafe-eval', which would allow eval() too); `init()` then rejects with
//              `wasm-blocked`, which names the source to add. After a failure only, an empty
//              module tells that refusal apart from a broken download or a corrupt file.
import { idemError } from "./driver.js";

// The smallest wasm module (magic number and version): it compiles and instantiates unless
// the page's policy refuses WebAssembly (WebKit compiles it then, and refuses the instance).
const EMPTY = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0);

/** `init(options)` of the package; `load` is wasm-bindgen's. */
export async function init(load, options) {
  let integrity, input = options;
  if (options != null && Object.getPrototypeOf(options) === Object.prototype) {
    ({ integrity, ...input } = options);
    if (integrity !== undefined) input.module_or_path = await checked(input.module_or_path, integrity);
  }
  try {
    return await load(input);
  } catch (e) {
    try {
      new WebAssembly.Instance(new WebAssembly.Module(EMPTY));
    } catch (refused) {
      // A browser without WebAssembly at all (Safari's Lockdown Mode) throws a ReferenceError.
      if (refused?.name == "CompileError") throw Object.assign(idemError(
        "the page's Content-Security-Policy refuses WebAssembly: add 'wasm-unsafe-eval' to its script-src " +
          "directive (not 'unsafe-eval', which allows eval() too)",
        "wasm-blocked",
      ), { cause: e });
    }
    throw e;
  }
}

/** The wasm's bytes, once they hash to `integrity`; rejects otherwise. */
async function checked(input, integrity) {
  const bad = (reason) => idemError(`invalid option \`integrity\`: ${reason}`, "invalid-options");
  const alg = /^sha(256|384|512)-[\w+/]+=*$/.exec(integrity)?.[1];
  if (!alg) throw bad("must be one SRI hash: sha256-, sha384- or sha512-<base64>");
  if (!crypto.subtle) throw bad("needs a secure context (https, localhost)");
  let bytes = (await input) ?? new URL("idemkey_bg.wasm", import.meta.url), name = "the wasm";
  if (typeof bytes == "string" || bytes instanceof URL || bytes instanceof Request) bytes = await fetch(bytes);
  if (bytes instanceof Response) {
    if (!bytes.ok) return bytes; // wasm-bindgen's loader says what failed
    name = bytes.url;
    bytes = await bytes.arrayBuffer();
  }
  if (bytes instanceof WebAssembly.Module) throw bad("needs the wasm's URL or bytes");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-" + alg, bytes));
  const actual = `sha${alg}-` + btoa(String.fromCharCode(...digest));
  if (actual == integrity) return bytes;
  throw idemError(`${name} does not match integrity ${integrity}: it hashes to ${actual}; it was not run`, "wasm-integrity");
}

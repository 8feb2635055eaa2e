// The package's `init()`: the wasm fetched, compiled as it downloads and handed to
// wasm-bindgen's `initSync`, with the two refusals a payment page needs told apart from a
// broken download. scripts/post-pack.sh makes this the default export of idemkey.js; it is
// no wasm-bindgen snippet, since the wasm never calls it. wasm-bindgen's own loader is left
// out of the package: it serves inputs and old signatures this one reads itself.
//
//   integrity  `init({ integrity: "sha384-..." })` hashes the wasm's bytes before any of
//              them is compiled, as `<script integrity>` does for the JS (one SRI hash:
//              `sha256-`, `sha384-` or `sha512-` and the digest in base64); a mismatch
//              rejects with `wasm-integrity`. `compileStreaming` has no integrity
//              argument, so these bytes are compiled with `compile`.
//   CSP        a Content-Security-Policy whose script-src lacks 'wasm-unsafe-eval' makes
//              the browser refuse wasm with a CompileError (Chromium's text points at
//              'unsafe-eval', which would allow eval() too); `init()` then rejects with
//              `wasm-blocked`, which names the source to add. After a failure only, an empty
//              module tells that refusal apart from a broken download or a corrupt file.
import { idemError } from "./driver.js";
import { badOption } from "./options.js";

// The smallest wasm module (magic number and version): it compiles and instantiates unless
// the page's policy refuses WebAssembly (WebKit compiles it then, and refuses the instance).
const EMPTY = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0);

// The one load under way or done: a second `init()` (another component, React's
// StrictMode) joins it. Cleared when it fails, so that the page may call `init()` again.
let loading;

/** `init(options)` of the package; `initSync` is wasm-bindgen's. */
export function init(initSync, options) {
  return (loading ??= load(initSync, options).catch((e) => {
    loading = undefined;
    throw e;
  }));
}

/** The wasm `options` point at (its URL, a request, a response, its bytes or a module), instantiated. */
async function load(initSync, options) {
  let integrity, source = options;
  if (options != null && Object.getPrototypeOf(options) === Object.prototype) {
    ({ integrity, module_or_path: source } = options);
  }
  source = (await source) ?? new URL("idemkey_bg.wasm", import.meta.url);
  if (integrity !== undefined) source = await checked(source, integrity);
  try {
    if (typeof source == "string" || source instanceof URL || source instanceof Request) source = await fetch(source);
    if (source instanceof Response) {
      if (!source.ok) throw new Error(`failed to fetch the wasm: ${source.status} ${source.statusText} fetching '${source.url}'`);
      // `compileStreaming` takes only a response served as application/wasm.
      source = await (source.headers.get("Content-Type") == "application/wasm"
        ? WebAssembly.compileStreaming(source)
        : source.arrayBuffer());
    }
    if (!(source instanceof WebAssembly.Module)) source = await WebAssembly.compile(source);
    return initSync({ module: source });
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
async function checked(bytes, integrity) {
  const bad = (reason) => badOption("integrity", reason);
  const alg = /^sha(256|384|512)-[\w+/]+=*$/.exec(integrity)?.[1];
  if (!alg) throw bad("must be one SRI hash: sha256-, sha384- or sha512-<base64>");
  if (!crypto.subtle) throw bad("needs a secure context (https, localhost)");
  let name = "the wasm";
  if (typeof bytes == "string" || bytes instanceof URL || bytes instanceof Request) bytes = await fetch(bytes);
  if (bytes instanceof Response) {
    if (!bytes.ok) return bytes; // load() says what failed
    name = bytes.url;
    bytes = await bytes.arrayBuffer();
  }
  if (bytes instanceof WebAssembly.Module) throw bad("needs the wasm's URL or bytes");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-" + alg, bytes));
  const actual = `sha${alg}-` + btoa(String.fromCharCode(...digest));
  if (actual == integrity) return bytes;
  throw idemError(`${name} does not match integrity ${integrity}: it hashes to ${actual}; it was not run`, "wasm-integrity");
}

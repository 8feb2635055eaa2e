// The options object of `Checkout.open` read for the Rust core (src/browser/options.rs):
// its names and types checked, and whether `fetch` would refuse the endpoint or headers.
// Every other rule is the core's. Joined into idemkey.js by scripts/post-pack.sh.
import { errorText, idemError, isObject, read, withHeaders } from "./driver.js";

/** The `invalid-options` IdemError for `option`, worded as Rust's `Error::message` words it. */
export const badOption = (option, reason) => idemError(`invalid option \`${option}\`: ${reason}`, "invalid-options");

// The last endpoint and headers `refused` accepted: a page opens its checkouts with the
// same ones, and making the Headers and the Request that check them cost 0.05 to 0.1 ms
// per open. The answer stays right for the page: whether a URL parses (and carries no
// credentials) does not depend on which http(s) address it is resolved against.
let accepted;

/**
 * Whether `fetch` would refuse the endpoint or the extra headers (`headers` as for
 * `send`), by the browser's own rules: `null`, or the `invalid-options` IdemError naming
 * the option (worded here as Rust's `Error::message` words it).
 */
export function refused(url, headers) {
  const asked = url + "\n\n" + headers;
  if (asked === accepted) return null;
  let option = "headers";
  try {
    withHeaders(new Headers(), headers);
    option = "endpoint";
    new Request(url);
    accepted = asked;
    return null;
  } catch (e) {
    return badOption(option, "refused by fetch: " + errorText(e));
  }
}

// `Checkout.open`'s options: each name and what it must be. No prototype, so a name such as
// "toString" is unknown like any other.
const OPTIONS = {
  __proto__: null,
  scope: "string",
  endpoint: "string",
  method: "string",
  headers: "headers",
  headerName: "string",
  headerFormat: "string",
  ttlSeconds: "number",
  timeoutMs: "number",
  maxRetries: "number",
  backoff: "backoff",
  deadlineMs: "number",
  storage: "string",
  namespace: "string",
  credentials: "string",
  onEvent: "function",
};
const BACKOFF = { __proto__: null, baseMs: "number", maxMs: "number" };


/**
 * Copies the own enumerable properties of `obj` (`option`, named `prefix` + name) into
 * `out` under that name; throws `[option, reason]` for the first one that is unknown or of
 * the wrong type. `undefined` and `null` mean "not given".
 */
function fill(obj, option, prefix, table, out) {
  if (!isObject(obj)) throw [option, "must be an object"];
  for (const name of Object.keys(obj)) {
    const kind = table[name];
    if (!kind) throw [prefix + name, "is not a known option"];
    const v = read(obj, name);
    if (v == null) continue;
    if (kind == "backoff") {
      fill(v, "backoff", "backoff.", BACKOFF, out);
    } else if (kind == "headers") {
      if (!isObject(v)) throw ["headers", "must be an object"];
      const pairs = [];
      for (const h of Object.keys(v)) {
        const value = read(v, h);
        if (typeof value != "string") throw ["headers", "values must be strings"];
        pairs.push(h, value);
      }
      out.headers = pairs;
    } else if (typeof v != kind) {
      throw [prefix + name, "must be a " + kind];
    } else {
      out[prefix + name] = v;
    }
  }
}

/**
 * The options object's values under their names (`backoff.baseMs` for the nested ones,
 * the headers as `[name, value, ...]`), their types checked and nothing else (the rules
 * are the Rust core's); throws the `invalid-options` IdemError (worded as Rust's
 * `Error::message` words it) for the first unknown or wrongly typed one.
 */
export function readOptions(options) {
  const out = { __proto__: null };
  try {
    fill(options, "options", "", OPTIONS, out);
  } catch (e) {
    if (Array.isArray(e)) throw badOption(...e);
    throw e;
  }
  return out;
}

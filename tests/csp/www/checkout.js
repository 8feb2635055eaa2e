// A checkout on a payment page: init(), open(), submit() once, then the outcome in
// `window.cspReport.result`. The query string picks the scope and, with `integrity`, what
// init() is told the wasm's hash is, and with `wasm`, where init() is told the wasm is; with
// `first`, an init() that looks for the wasm there goes first (its error is reported). A refused init() reports the IdemError and what the
// origin holds afterwards (nothing, when nothing was stored).
import init, { Checkout } from "/pkg/idemkey.js";

const report = window.cspReport;
const query = new URLSearchParams(location.search);

async function stored() {
  const names = (s) => Array.from({ length: s.length }, (_, i) => s.key(i));
  const databases = indexedDB.databases ? (await indexedDB.databases()).map((d) => d.name) : null;
  return { local: names(localStorage), session: names(sessionStorage), databases };
}

async function run() {
  const integrity = query.get("integrity") ?? undefined;
  const wasm = query.get("wasm") ?? undefined;
  let first;
  if (query.has("first")) {
    first = await init({ module_or_path: query.get("first") }).then(() => "loaded", (e) => e.message);
  }
  try {
    await init(integrity || wasm ? { integrity, module_or_path: wasm } : undefined);
  } catch (e) {
    return { stage: "init", name: e.name, code: e.code, message: e.message, stored: await stored() };
  }
  const checkout = Checkout.open({ scope: query.get("scope") || "csp-cart", endpoint: "/api/charges" });
  const r = await checkout.submit({ amount: 4200, currency: "EUR" });
  return { stage: "submit", key: r.key, status: r.status, ok: r.ok, attempts: r.attempts, state: checkout.state, first };
}

run().then(
  (result) => setTimeout(() => (report.result = result), 100), // late violation reports come first
  (e) => (report.result = { stage: "error", name: e.name, code: e.code, message: e.message }),
);

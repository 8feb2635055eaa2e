// The audited page's checkout: init() with the wasm's pinned hash, open() in the namespace and
// scope the query string names, submit() once; with `finish`, finish() after it. The outcome
// goes to `window.audit` (nothing is written to the DOM).
import init, { Checkout } from "/pkg/idemkey.js";

const query = new URLSearchParams(location.search);

async function run() {
  await init({ integrity: "IDEMKEY_WASM_INTEGRITY" });
  const checkout = Checkout.open({ scope: query.get("scope"), namespace: query.get("namespace"), endpoint: "/api/charges" });
  const r = await checkout.submit({ amount: 4200, currency: "EUR", cart: query.get("scope") });
  if (query.has("finish")) checkout.finish();
  return { key: r.key, status: r.status, ok: r.ok, fromCache: r.fromCache, body: r.body, state: checkout.state };
}

run().then(
  (result) => (window.audit = { result }),
  (e) => (window.audit = { error: `${e.name} ${e.code ?? ""} ${e.message}` }),
);

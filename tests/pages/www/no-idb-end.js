// A browser without IndexedDB whose localStorage has room for the pending record but not for
// the answer (its setItem refuses record texts over 500 bytes, as a full quota would);
// the page pays, then calls finish() and reports what it returned.
Object.defineProperty(globalThis, "indexedDB", { value: undefined, configurable: true });
import init, { Checkout } from "/pkg/idemkey.js";
const query = new URLSearchParams(location.search);
const BASKET = { amount: 4200, currency: "EUR", items: [{ sku: "tea", qty: 2 }] };
const open = (events) => Checkout.open({ scope: query.get("scope"), endpoint: "/api/charges",
  headers: { "X-Customer-Id": query.get("customer") }, onEvent: (e) => events.push({ ...e }) });
async function pay(c) {
  try { const r = await c.submit(BASKET); return { key: r.key, status: r.status, fromCache: r.fromCache, replayed: r.replayed }; }
  catch (e) { return { error: e.code || String(e), reason: e.reason }; }
}
async function phase1() {
  await init();
  const events = [];
  const c = open(events);
  const orig = Storage.prototype.setItem;
  Storage.prototype.setItem = function (k, v) {
    if (this === localStorage && k.startsWith("idemkey:v1:") && v.length > 500) throw new DOMException("probe quota", "QuotaExceededError");
    return orig.call(this, k, v);
  };
  const result = await pay(c);
  Storage.prototype.setItem = orig;
  const durable = c.finish();
  const ns = Object.keys(localStorage).filter((k) => k.startsWith("idemkey:")).map((k) => [k, localStorage.getItem(k).slice(0, 120)]);
  const ss = Object.keys(sessionStorage).filter((k) => k.startsWith("idemkey:")).map((k) => [k, sessionStorage.getItem(k).slice(0, 120)]);
  return { phase: 1, result, durable, storage: c.storage, events: events.map((e) => `${e.type} ${e.from || ""}->${e.to || ""}`), local: ns, session: ss };
}
window.report = await phase1().catch((e) => ({ failed: String(e) }));

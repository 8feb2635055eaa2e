// One tab of a shop's cart, as a user writes it: the cart's checkout is opened when the
// tab loads, Pay submits the basket, and the receipt route (`end`: finish or reset, or
// none) ends the attempt in the same turn the tab's own payment is answered, as the
// README advises. The address says: `scope`, `customer`, `end`, `deadline` (deadlineMs).
// `window.pay()` presses Pay; `window.presses[n]` is how press n settled (null while it
// runs); `window.sent` is set once this tab has sent a try; `window.ended` once the
// receipt route ran (and `window.endError` if finish() or reset() threw);
// `window.clearRecord()` clears the record's copies from the origin's storage.
import init, { Checkout } from "/pkg/idemkey.js";

const query = new URLSearchParams(location.search);
const BASKET = { amount: 4200, currency: "EUR", items: [{ sku: "tea", qty: 2 }] };

await init();
const deadline = query.get("deadline");
const checkout = Checkout.open({
  scope: query.get("scope"),
  endpoint: "/api/charges",
  headers: { "X-Customer-Id": query.get("customer") },
  ...(deadline ? { deadlineMs: Number(deadline) } : {}),
  onEvent: (e) => {
    if (e.type === "attempt") window.sent = true;
  },
});

function receiptRoute() {
  if (window.ended) return;
  try {
    if (query.get("end") === "reset") checkout.reset();
    else checkout.finish();
  } catch (e) {
    window.endError = { name: e.name, code: e.code, message: e.message };
  }
  window.ended = true;
}

// What this tab shows: the key of the attempt its Pay would send.
window.shownKey = () => checkout.key;
// The record's copies cleared from this origin's storage, as a shop's script or the
// customer clearing site data would: `window.cleared` once IndexedDB has deleted it.
window.clearRecord = () => {
  const at = `idemkey:v1:${query.get("scope")}`;
  localStorage.removeItem(at);
  const open = indexedDB.open("idemkey", 1);
  open.onsuccess = () => {
    const tx = open.result.transaction("records", "readwrite");
    tx.objectStore("records").delete(at);
    tx.oncomplete = () => { open.result.close(); window.cleared = "done"; };
    tx.onerror = () => { window.cleared = String(tx.error); };
  };
  open.onerror = () => { window.cleared = String(open.error); };
};

window.presses = [];
window.pay = () => {
  const n = window.presses.length;
  window.presses.push(null);
  checkout.submit(BASKET).then(
    (r) => {
      window.presses[n] = { key: r.key, status: r.status, ok: r.ok, body: r.body, fromCache: r.fromCache };
      if (r.ok && query.get("end")) receiptRoute();
    },
    (e) => {
      window.presses[n] = { error: e.code || String(e), reason: e.reason, message: e.message };
    },
  );
  return n;
};
window.ready = true;

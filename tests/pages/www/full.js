// A shop's checkout page whose own data fills localStorage. The address says: `scope`,
// `customer`, `phase`, `end` (finish or reset), `older` (1: an earlier order of the scope
// is paid and finished first, while storage still takes writes).
// phase=1: pays the basket, fills localStorage to its quota with the shop's own data, ends
// the attempt on the receipt route (finish() or reset()) and leaves at once to phase=left.
// `window.report` there holds what phase 1 saw: the payment, how the end went (`thrown`:
// the error finish() or reset() threw; `events`: the events emitted during the call), and
// with older=1 the earlier order's key and the localStorage entries naming it before and
// after the end.
// phase=2 (another tab, opened later): shows the scope's checkout and pays the same
// basket; `window.report` holds what open() showed and how the submit settled.
import init, { Checkout } from "/pkg/idemkey.js";

const query = new URLSearchParams(location.search);
const BASKET = { amount: 4200, currency: "EUR", items: [{ sku: "tea", qty: 2 }] };
const FILLER = "shop:cache:";

// The shop's own data: product pages it keeps for later, until localStorage refuses even
// one more character.
function fillLocalStorage() {
  let n = 0;
  for (let size = 1 << 20; size >= 1; ) {
    try {
      localStorage.setItem(`${FILLER}${n}`, "x".repeat(size));
      n += 1;
    } catch {
      size = Math.floor(size / 2);
    }
  }
}

/** The localStorage entries of the module's namespace whose value names `key` (the scope written <scope>). */
function entriesNaming(key) {
  return Object.keys(localStorage)
    .filter((k) => k.startsWith("idemkey:") && (localStorage.getItem(k) || "").includes(key))
    .map((k) => k.replace(query.get("scope"), "<scope>"))
    .sort();
}

function open(events) {
  return Checkout.open({
    scope: query.get("scope"),
    endpoint: "/api/charges",
    headers: { "X-Customer-Id": query.get("customer") },
    onEvent: (e) => events.push({ ...e }),
  });
}

async function pay(checkout) {
  try {
    const r = await checkout.submit(BASKET);
    return { key: r.key, status: r.status, fromCache: r.fromCache };
  } catch (e) {
    return { error: e.code || String(e), reason: e.reason, message: e.message };
  }
}

async function phase1() {
  await init();
  const events = [];
  const checkout = open(events);
  const report = { phase: 1 };
  if (query.get("older") === "1") {
    const older = await pay(checkout);
    checkout.finish();
    report.older = { result: older, before: entriesNaming(older.key) };
  }
  report.result = await pay(checkout);
  if (report.result.status !== 201) return report;
  fillLocalStorage();
  // The receipt route: end the attempt, and leave at once.
  const from = events.length;
  try {
    report.durable = query.get("end") === "reset" ? checkout.reset() : checkout.finish();
  } catch (e) {
    report.thrown = { name: e.name, code: e.code, reason: e.reason, message: e.message };
  }
  report.events = events.slice(from);
  if (report.older) report.older.after = entriesNaming(report.older.result.key);
  const next = new URL(location.href);
  next.searchParams.set("phase", "left");
  next.searchParams.set("report", JSON.stringify(report));
  location.assign(next);
  return null;
}

async function phase2() {
  await init();
  const checkout = open([]);
  const shown = { key: checkout.key, state: checkout.state };
  return { phase: 2, shown, result: await pay(checkout) };
}

const phase = query.get("phase");
if (phase === "left") {
  window.report = JSON.parse(query.get("report"));
} else {
  const report = await (phase === "1" ? phase1() : phase2()).catch((e) => ({ phase, failed: String(e) }));
  if (report) window.report = report;
}

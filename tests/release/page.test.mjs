// The payment page audited as a security team would, in Chromium: the page is served with the
// documented Content-Security-Policy (Trusted Types required) plus `report-to`,
// Reporting-Endpoints and an Integrity-Policy that refuses any script without a hash
// (tests/release/front.mjs). A checkout pays once, the page reloads and pays "from cache",
// then finishes; the report endpoint receives no violation while a control page's violations
// reach it; no request leaves the page's origin. Everything the module touched (storage keys,
// IndexedDB databases and stores, BroadcastChannels, Web Locks, listeners on window and
// document, requests: tests/release/observe.js) is compared with the inventory printed in
// docs/payment-pages.md, both ways.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { CHROMIUM, CHROMIUM_ARGS, ROOT, mustExist, startServer } from "../support/reference.mjs";
import { selfSigned, startFront } from "./front.mjs";
import { compare, inventory } from "./inventory.mjs";
import { release } from "./release.mjs";

const { pkg } = release();
const WWW = path.join(ROOT, "tests/release/www");
const OBSERVE = readFileSync(path.join(ROOT, "tests/release/observe.js"), "utf8");
const NAMESPACE = "shop";
const SCOPE = "audit-cart";
const tmp = mkdtempSync(path.join(tmpdir(), "idemkey-audit-"));
const sri = (bytes) => `sha384-${createHash("sha384").update(bytes).digest("base64")}`;

let api;
let front;
let browser;
let context;
const requests = [];
const observed = [];

before(async () => {
  // The pages, with the hashes of this build written in.
  const www = path.join(tmp, "www");
  cpSync(WWW, www, { recursive: true });
  const pinned = JSON.parse(readFileSync(path.join(pkg, "integrity.json"), "utf8"));
  const fill = (file, values) => {
    let text = readFileSync(path.join(www, file), "utf8");
    for (const [k, v] of Object.entries(values)) text = text.replace(k, v);
    writeFileSync(path.join(www, file), text);
    return text;
  };
  const auditJs = fill("audit.js", { IDEMKEY_WASM_INTEGRITY: pinned["idemkey_bg.wasm"] });
  fill("audit.html", { IDEMKEY_JS_INTEGRITY: pinned["idemkey.js"], AUDIT_JS_INTEGRITY: sri(auditJs) });
  fill("violate.html", { VIOLATE_JS_INTEGRITY: sri(readFileSync(path.join(www, "violate.js"))) });

  api = await startServer([]);
  front = await startFront({ www, pkg, api: api.url, tls: selfSigned(tmp) });
  mustExist(CHROMIUM, "install Debian's chromium (make tools)");
  const { chromium } = await import("playwright-core");
  // Reports go out at once rather than in the minute's batch, and the run's certificate is
  // taken (by the report uploads too).
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, "--short-reporting-delay", "--ignore-certificate-errors"],
  });
  context = await browser.newContext({ ignoreHTTPSErrors: true });
  await context.addInitScript(OBSERVE);
  context.on("request", (r) => requests.push({ method: r.method(), url: r.url(), type: r.resourceType() }));
});

after(async () => {
  await browser?.close();
  await front?.close();
  await api?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Loads `query` of the audited page in `page` and returns its outcome and what it touched. */
async function checkout(page, query) {
  await page.goto(`${front.url}/audit.html?namespace=${NAMESPACE}&scope=${SCOPE}${query}`);
  await page.waitForFunction(() => window.audit, null, { timeout: 20000 });
  const { audit, seen } = await page.evaluate(() => ({ audit: window.audit, seen: window.__observed }));
  assert.equal(audit.error, undefined, audit.error);
  observed.push(seen);
  return { ...audit.result, seen };
}

async function ledger() {
  const res = await fetch(`${api.url}/api/charges`);
  return (await res.json()).charges;
}

test("the audited page pays once, reports nothing and talks to its own origin only", async () => {
  const page = await context.newPage();
  const first = await checkout(page, "");
  assert.equal(first.status, 201);
  assert.equal(first.state, "succeeded");
  const record = await page.evaluate((k) => localStorage.getItem(k), `${NAMESPACE}:v1:${SCOPE}`);
  const again = await checkout(page, ""); // a reload: the page leaves (pagehide) and comes back
  assert.deepEqual([again.fromCache, again.key], [true, first.key]);
  const last = await checkout(page, "&finish");
  assert.deepEqual([last.fromCache, last.key], [true, first.key]);
  assert.equal((await ledger()).length, 1, "one charge");

  // The stored record and the channel's notices carry the server's response body (the
  // inventory says so): each string of the body is in them.
  const strings = Object.values(first.body).filter((v) => typeof v === "string" && v.length >= 6);
  assert.ok(strings.length > 0, JSON.stringify(first.body));
  for (const s of strings) {
    assert.ok(record.includes(s), `the stored record holds the body's ${s}`);
    assert.ok(first.seen.posted.some(([name, m]) => name === "idemkey" && m.includes(s)), `a notice holds the body's ${s}`);
  }

  // A control page's violations reach the endpoint: it is listening, and the Integrity-Policy is known.
  const control = await context.newPage();
  await control.goto(`${front.url}/violate.html`);
  await control.waitForFunction(() => window.violated);
  const deadline = Date.now() + 15000;
  const from = (page) => front.reports.filter((r) => (r.url ?? r.body?.documentURL ?? "").includes(page));
  while (Date.now() < deadline && new Set(from("violate.html").map((r) => r.type)).size < 2) await new Promise((ok) => setTimeout(ok, 100));
  assert.deepEqual([...new Set(from("violate.html").map((r) => r.type))].sort(), ["csp-violation", "integrity-violation"],
    `the control's reports: ${JSON.stringify(front.reports)}`);
  assert.equal(await control.evaluate(() => window.unpinnedRan), undefined, "the script without a hash did not run");

  assert.deepEqual(from("audit.html"), [], "no violation reported by the audited page");
  assert.deepEqual(front.reports.filter((r) => !(r.url ?? r.body?.documentURL ?? "").includes("violate.html")), []);
  for (const seen of observed) assert.deepEqual(seen.violations, []);
  const elsewhere = requests.filter((r) => new URL(r.url).origin !== front.url);
  assert.deepEqual(elsewhere, [], "every request went to the page's origin");
});

test("what the checkout touched is the inventory in docs/payment-pages.md, and the inventory is all of it", () => {
  assert.ok(observed.length === 3, "runs after the audited checkout");
  const touched = [];
  for (const seen of observed) {
    for (const [area, , key] of seen.storage) touched.push([area, key]);
    for (const name of seen.databases) touched.push(["IndexedDB", name]);
    for (const name of seen.channels) touched.push(["BroadcastChannel", name]);
    for (const name of seen.locks) touched.push(["Web Lock", name]);
    for (const [target, type] of seen.listeners) touched.push(["listener", `${target} ${type}`]);
  }
  // The module's requests: all but the page's own document and scripts, named relative to the
  // module's directory (/pkg/).
  const own = /^\/(audit\.html|audit\.js|pkg\/idemkey\.js|favicon\.ico)$/;
  for (const r of requests) {
    const { pathname } = new URL(r.url);
    if (!own.test(pathname) && !pathname.startsWith("/violate") && pathname !== "/unpinned.js") {
      touched.push(["request", `${r.method} ${pathname.replace(/^\/pkg\//, "")}`]);
    }
  }
  const rows = inventory();
  const fill = { namespace: NAMESPACE, scope: SCOPE, method: "POST", endpoint: "/api/charges" };
  const { undocumented, unseen } = compare(rows, touched, fill);
  assert.deepEqual(undocumented, [], "touched, and not in the inventory");
  assert.deepEqual(unseen, [], "in the inventory, and not touched");
  // IndexedDB's object stores are named in their database's row.
  const idb = rows.find((r) => r.kind === "IndexedDB");
  for (const store of new Set(observed.flatMap((s) => s.stores))) {
    assert.ok(idb.when.includes(`\`${store.split("/")[1]}\``), `the IndexedDB row names the store ${store}`);
  }
});

test("the inventory check fails when the docs leave out any row the checkout needs", () => {
  const text = readFileSync(path.join(ROOT, "docs/payment-pages.md"), "utf8");
  const rows = inventory(text);
  const touched = rows.filter((r) => !r.optional).map((r) => [r.kind, r.name
    .replaceAll("<namespace>", NAMESPACE).replaceAll("<scope>", SCOPE).replaceAll("<method>", "POST").replaceAll("<endpoint>", "/api/charges")
    .replaceAll("<key>", "00000000-0000-4000-8000-000000000000")]);
  const fill = { namespace: NAMESPACE, scope: SCOPE, method: "POST", endpoint: "/api/charges" };
  assert.deepEqual(compare(rows, touched, fill), { undocumented: [], unseen: [] });
  for (const row of rows.filter((r) => !r.optional)) {
    const without = inventory(text.replace(`${row.line}\n`, ""));
    assert.ok(compare(without, touched, fill).undocumented.length > 0, `without the row of ${row.kind} ${row.name}`);
  }
});

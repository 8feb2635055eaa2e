// idemkey on a payment page, in Chromium, Firefox and WebKit (W3C WebDriver for all three):
// - under the strict policy (tests/csp/policy.mjs, sent as a header by the reference
//   server's --csp), a checkout whose module is imported by an external script pays once and
//   the page sees no `securitypolicyviolation`;
// - without 'wasm-unsafe-eval', init() rejects with the `wasm-blocked` IdemError naming what
//   to add, and nothing is sent or stored;
// - init({ integrity }) with the hash in the package's integrity.json pays; a wasm with one
//   byte flipped (still a valid module) is refused with `wasm-integrity` before any request;
// - a wasm served as another type than application/wasm (a CDN's octet-stream) still loads,
//   without the browser's streaming compiler, and pays; an init() that finds no wasm rejects
//   saying so, and the next init() loads it and pays;
// - `<script type="module" integrity>` with the shipped hash of idemkey.js loads the module,
//   and a wrong hash does not.
// CSP_BROWSERS=chrome,firefox,webkit (the default) picks the browsers, for development only.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ROOT, mustExist, startServer } from "../support/reference.mjs";
import { launch } from "../support/webdriver.mjs";
import { DEMO_POLICY, POLICY, WITHOUT_WASM } from "./policy.mjs";

const PKG = path.resolve(ROOT, process.env.IDEMKEY_PKG || "pkg");
const WWW = path.join(ROOT, "tests", "csp", "www");
const BROWSERS = (process.env.CSP_BROWSERS || "chrome,firefox,webkit").split(",");

mustExist(path.join(PKG, "integrity.json"), "build the module with `make build` (post-pack writes it)");
const SHIPPED = JSON.parse(readFileSync(path.join(PKG, "integrity.json"), "utf8"));
const tmp = mkdtempSync(path.join(tmpdir(), "idemkey-csp-"));
const servers = {};

/** The wasm with one byte flipped, the last one whose flip leaves a module that compiles. */
function tampered(bytes) {
  for (let i = bytes.length - 1; i > 8; i--) {
    const t = Buffer.from(bytes);
    t[i] ^= 0x01;
    if (WebAssembly.validate(t)) return t;
  }
  throw new Error("no byte of the wasm can be flipped into another valid module");
}

before(async () => {
  // The pages, with the SRI pages' hashes written in (they change with every build).
  const www = path.join(tmp, "www");
  cpSync(WWW, www, { recursive: true });
  const template = readFileSync(path.join(WWW, "sri.html"), "utf8");
  const wrong = SHIPPED["idemkey_bg.wasm"]; // a well-formed hash, of other bytes
  writeFileSync(path.join(www, "sri-shipped.html"), template.replace(`integrity="INTEGRITY"`, `integrity="${SHIPPED["idemkey.js"]}"`));
  writeFileSync(path.join(www, "sri-wrong.html"), template.replace(`integrity="INTEGRITY"`, `integrity="${wrong}"`));
  // The shipped wasm under a name the server types as application/octet-stream.
  cpSync(path.join(PKG, "idemkey_bg.wasm"), path.join(www, "idemkey_bg.bin"));
  const bad = path.join(tmp, "pkg-tampered");
  cpSync(PKG, bad, { recursive: true });
  writeFileSync(path.join(bad, "idemkey_bg.wasm"), tampered(readFileSync(path.join(PKG, "idemkey_bg.wasm"))));
  const serve = (pkg, policy) => startServer(["--static", www, "--pkg", pkg, "--csp", policy]);
  servers.strict = await serve(PKG, POLICY);
  servers.noWasm = await serve(PKG, WITHOUT_WASM);
  servers.tampered = await serve(bad, POLICY);
});

after(async () => {
  for (const s of Object.values(servers)) await s.stop();
  rmSync(tmp, { recursive: true, force: true });
});

async function ledger(server) {
  const res = await fetch(`${server.url}/api/charges`);
  assert.equal(res.status, 200);
  return (await res.json()).charges;
}

test("the policy is a header of the page, the module and the wasm, not a meta element", async () => {
  for (const file of ["/checkout.html", "/checkout.js", "/pkg/idemkey.js", "/pkg/idemkey_bg.wasm"]) {
    const res = await fetch(servers.strict.url + file);
    assert.equal(res.status, 200, file);
    assert.equal(res.headers.get("content-security-policy"), POLICY, file);
    await res.arrayBuffer();
  }
  const page = readFileSync(path.join(WWW, "checkout.html"), "utf8");
  assert.doesNotMatch(page, /http-equiv|<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son\w+=/i, "nothing inline");
});

test("docs/payment-pages.md prints the policy the strict-CSP tests serve, and the demo's adds only its own needs", () => {
  const page = readFileSync(path.join(ROOT, "docs/payment-pages.md"), "utf8");
  const printed = [...page.matchAll(/^ {4}Content-Security-Policy: (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(printed, [POLICY]);
  const makefile = readFileSync(path.join(ROOT, "Makefile"), "utf8");
  assert.equal(/^PAYMENT_CSP\s*:= (.+)$/m.exec(makefile)?.[1], POLICY, "the Makefile's PAYMENT_CSP");
  assert.match(makefile, /^DEMO_CSP\s*:= \$\(PAYMENT_CSP\); style-src 'self'; img-src 'self'$/m);
  assert.equal(DEMO_POLICY, `${POLICY}; style-src 'self'; img-src 'self'`);
});

test("integrity.json holds the SHA-384 SRI hashes of both files", async () => {
  const { createHash } = await import("node:crypto");
  assert.deepEqual(Object.keys(SHIPPED).sort(), ["idemkey.js", "idemkey_bg.wasm"]);
  for (const [file, hash] of Object.entries(SHIPPED)) {
    const digest = createHash("sha384").update(readFileSync(path.join(PKG, file))).digest("base64");
    assert.equal(hash, `sha384-${digest}`, file);
  }
  const pj = JSON.parse(readFileSync(path.join(PKG, "package.json"), "utf8"));
  assert.ok(pj.files.includes("integrity.json"), "the tarball ships it");
});

for (const name of BROWSERS) {
  describe(name, () => {
    let b;
    before(async () => {
      b = await launch(name);
    });
    after(async () => {
      await b?.quit();
    });

    /** Loads `url` and returns the page's report once its checkout settled, or its scripts failed. */
    async function visit(url) {
      await b.navigate(url);
      return b.waitFor(() => {
        const r = window.cspReport;
        return r && (r.result || (r.loaded && r.scripts.some(([type]) => type === "error"))) ? r : null;
      }, [], { timeout: 30000, message: `the page at ${url} settled` });
    }

    // WebKit fetches /favicon.ico for a page that names no icon, which `img-src` (here
    // 'none', from default-src) refuses: the page's own business, as its favicon would be.
    const pageOwn = (v) => v.directive === "img-src" && new URL(v.blocked).pathname === "/favicon.ico";

    function assertPaid(report, charges, scope) {
      assert.deepEqual(report.violations.filter((v) => !pageOwn(v)), [], "no securitypolicyviolation");
      assert.equal(report.result.stage, "submit", JSON.stringify(report.result));
      assert.equal(report.result.status, 201);
      assert.equal(report.result.state, "succeeded");
      assert.equal(report.result.attempts, 1);
      assert.equal(charges.filter((c) => c.key === report.result.key).length, 1, `one charge for ${scope}`);
    }

    function assertNothingLeft(report) {
      const { local, session, databases } = report.result.stored;
      assert.deepEqual(local, [], "nothing in localStorage");
      assert.deepEqual(session, [], "nothing in sessionStorage");
      if (databases !== null) assert.deepEqual(databases, [], "no IndexedDB database");
    }

    test("under the strict policy, init(), open() and submit() pay once with no violation", async () => {
      const scope = `strict-${name}`;
      const report = await visit(`${servers.strict.url}/checkout.html?scope=${scope}`);
      assertPaid(report, await ledger(servers.strict), scope);
    });

    // P-error-wasm-blocked: a policy without 'wasm-unsafe-eval' makes init() reject with wasm-blocked
    test("without 'wasm-unsafe-eval', init() rejects with wasm-blocked; nothing sent or stored", async () => {
      const report = await visit(`${servers.noWasm.url}/checkout.html?scope=blocked-${name}`);
      const r = report.result;
      assert.equal(r.stage, "init", JSON.stringify(r));
      assert.equal(r.name, "IdemError");
      assert.equal(r.code, "wasm-blocked", r.message);
      assert.match(r.message, /'wasm-unsafe-eval'/);
      assert.match(r.message, /\bscript-src\b/);
      assertNothingLeft(report);
      assert.deepEqual(await ledger(servers.noWasm), [], "no charge");
    });

    test("a wasm served as application/octet-stream loads and pays", async () => {
      const res = await fetch(`${servers.strict.url}/idemkey_bg.bin`);
      assert.notEqual(res.headers.get("content-type"), "application/wasm", "the test serves another type");
      await res.arrayBuffer();
      const scope = `octet-${name}`;
      const report = await visit(`${servers.strict.url}/checkout.html?scope=${scope}&wasm=/idemkey_bg.bin`);
      assertPaid(report, await ledger(servers.strict), scope);
    });

    test("an init() that finds no wasm rejects with its status, and the next init() loads it and pays", async () => {
      const scope = `retry-${name}`;
      const report = await visit(`${servers.strict.url}/checkout.html?scope=${scope}&first=/missing.wasm`);
      assert.match(report.result.first ?? "", /^failed to fetch the wasm: 404 .*missing\.wasm/, JSON.stringify(report.result));
      assertPaid(report, await ledger(servers.strict), scope);
    });

    test("init({ integrity }) with the shipped hash pays", async () => {
      const scope = `integrity-${name}`;
      const hash = encodeURIComponent(SHIPPED["idemkey_bg.wasm"]);
      const report = await visit(`${servers.strict.url}/checkout.html?scope=${scope}&integrity=${hash}`);
      assertPaid(report, await ledger(servers.strict), scope);
    });

    // P-error-wasm-integrity: init({ integrity }) refuses bytes that differ, before any request
    test("a wasm with one byte flipped is refused with wasm-integrity before any request", async () => {
      const hash = SHIPPED["idemkey_bg.wasm"];
      const report = await visit(`${servers.tampered.url}/checkout.html?scope=t-${name}&integrity=${encodeURIComponent(hash)}`);
      const r = report.result;
      assert.equal(r.stage, "init", JSON.stringify(r));
      assert.equal(r.name, "IdemError");
      assert.equal(r.code, "wasm-integrity", r.message);
      assert.ok(r.message.includes(hash), `the message names the expected hash: ${r.message}`);
      assert.match(r.message, /idemkey_bg\.wasm does not match .* it hashes to sha384-\S+; it was not run$/);
      assertNothingLeft(report);
      assert.deepEqual(await ledger(servers.tampered), [], "no charge");
    });

    test("init() refuses integrity that is not one SRI hash with invalid-options, before any request", async () => {
      const report = await visit(`${servers.tampered.url}/checkout.html?scope=md5-${name}&integrity=md5-AAAA`);
      const r = report.result;
      assert.equal(r.stage, "init", JSON.stringify(r));
      assert.equal(r.code, "invalid-options", r.message);
      assert.match(r.message, /^invalid option `integrity`: must be one SRI hash/);
      assertNothingLeft(report);
      assert.deepEqual(await ledger(servers.tampered), [], "no charge");
    });

    test("<script type=module integrity> with the shipped hash of idemkey.js loads the module", async () => {
      const scope = `sri-${name}`;
      const report = await visit(`${servers.strict.url}/sri-shipped.html?scope=${scope}`);
      const own = report.scripts.filter(([, src]) => src.endsWith("/pkg/idemkey.js"));
      assert.deepEqual(own.map(([type]) => type), ["load"]);
      assertPaid(report, await ledger(servers.strict), scope);
    });

    test("<script type=module integrity> with a wrong hash does not load it", async () => {
      const before = (await ledger(servers.strict)).length;
      const report = await visit(`${servers.strict.url}/sri-wrong.html?scope=sri-wrong-${name}`);
      const own = report.scripts.filter(([, src]) => src.endsWith("/pkg/idemkey.js"));
      assert.deepEqual(own.map(([type]) => type), ["error"]);
      assert.equal(report.result, null, "checkout.js, which imports it, never ran");
      assert.equal((await ledger(servers.strict)).length, before, "no charge");
    });
  });
}

// The browser module against the example shop (examples/axum-orders on idemkey-axum), in
// headless Chromium: the README's quick-start page, unchanged, pays at the shop's POST /orders
// on a real SQLite file, with the provider in its own process. A double-click and a click
// after the answer are one order and one payment; a reload while the request is at the shop
// keeps the key, and Pay pressed again is still one order and one payment.
//
// The shop serves no pages, so a small server of this test stands in front of it, as a
// shop's web server would: it serves the page (examples/no-bundler/index.html with the quick
// start's checkout.js and the module from pkg/) and passes POST /api/charges, the page's
// endpoint, to the shop's POST /orders, one origin for both. A browser that goes away (the
// reload) closes its request to the shop too.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { ROOT, launchChromium, mustExist } from "../support/reference.mjs";

// Built by `cargo test --workspace` (make test-backend builds them first: make test-server).
const BIN = path.join(ROOT, "target", "debug");
// Long enough for a second click, or a reload, to land while the first request is at the shop.
const PAUSE_MS = 1500;
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };

/** Starts `bin` with `args`; resolves once it prints its address. `lines` gets every stdout line. */
function start(bin, args, lines = () => {}) {
  mustExist(bin, "build it with `cargo test --workspace --no-run` (make test-server)");
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr = (stderr + d).slice(-4000); });
  const stop = () => child.kill("SIGKILL");
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const all = out.split("\n");
      out = all.pop();
      for (const line of all) {
        const m = /^listening on (http:\/\/\S+)/.exec(line);
        if (m) resolve({ url: m[1], stop, stderr: () => stderr });
        lines(line);
      }
    });
    child.on("exit", (code) => reject(new Error(`${bin} exited (${code}) before listening:\n${stderr}`)));
  });
}

/** The page's origin: the quick start, the module, and /api/charges passed to the shop's /orders. */
function front(shopUrl) {
  const files = {
    "/": path.join(ROOT, "examples/no-bundler/index.html"),
    "/checkout.js": path.join(ROOT, "examples/checkout/checkout.js"),
  };
  const pkg = "/node_modules/idemkey/";
  const server = http.createServer((req, res) => {
    if (req.method === "POST" && req.url === "/api/charges") {
      const upstream = http.request(`${shopUrl}/orders`, { method: "POST", headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      // The browser went away before the answer: so does the request to the shop.
      res.on("close", () => { if (!res.writableFinished) upstream.destroy(); });
      req.pipe(upstream);
      return;
    }
    const file = files[req.url] ?? (req.url.startsWith(pkg) && path.join(ROOT, "pkg", path.basename(req.url)));
    try {
      const body = readFileSync(file);
      res.writeHead(200, { "Content-Type": TYPES[path.extname(file)] ?? "text/html" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((done) => { server.closeAllConnections(); server.close(done); }),
  })));
}

let browser;
before(async () => {
  mustExist(path.join(ROOT, "pkg", "idemkey.js"), "build the module with `make build`");
  browser = await launchChromium();
});
after(() => browser?.close());

/**
 * A fresh provider, shop (SQLite file in a temp dir) and front, and a fresh browser context;
 * runs `body` with them, then checks the shop's orders and the provider's payments.
 */
async function withShop(body) {
  const dir = mkdtempSync(path.join(tmpdir(), "idemkey-shop-"));
  const paused = [];
  const waiters = [];
  const provider = await start(path.join(BIN, "provider"), ["--addr", "127.0.0.1:0"]);
  const shop = await start(path.join(BIN, "orders"), ["--database", `sqlite:${path.join(dir, "shop.db")}`,
    "--provider", provider.url, "--secret", "the browser test's fingerprint secret, 32 bytes",
    "--pause-after-provider-ms", String(PAUSE_MS)], (line) => {
    const m = /^provider answered (.*)$/.exec(line);
    if (m) { paused.push(m[1]); waiters.splice(0).forEach((w) => w()); }
  });
  const site = await front(shop.url);
  const context = await browser.newContext();
  const seen = { posts: [], problems: [] };
  const shopAt = {
    /** Resolves once a request has been paid at the provider and waits before its commit. */
    paused: () => new Promise((resolve) => (paused.length ? resolve() : waiters.push(resolve))),
    async orders() { return (await (await fetch(`${shop.url}/orders`)).json()).orders; },
    async payments() { return (await (await fetch(`${provider.url}/stats`)).json()).payments; },
  };
  try {
    const page = await context.newPage();
    page.on("pageerror", (e) => seen.problems.push(`pageerror: ${e.message}`));
    // Failed loads are judged below by their status; any other console error is a problem.
    page.on("console", (m) => {
      if (m.type() === "error" && !/^Failed to load resource/.test(m.text())) seen.problems.push(`console: ${m.text()}`);
    });
    page.on("response", (r) => {
      // A 409 is the shop saying the first request still runs: the module waits and retries.
      const where = new URL(r.url()).pathname;
      if (r.status() >= 400 && r.status() !== 409 && where !== "/favicon.ico") seen.problems.push(`HTTP ${r.status()} for ${where}`);
    });
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/api/charges")) seen.posts.push(r.headers()["idempotency-key"]);
    });
    await page.goto(`${site.url}/`);
    await ready(page);
    await body(page, shopAt, seen);
    assert.deepEqual(seen.problems, []);
  } catch (e) {
    e.message += `\n--- page problems ---\n${seen.problems.join("\n")}\n--- shop stderr ---\n${shop.stderr()}`;
    throw e;
  } finally {
    await context.close();
    await site.close();
    shop.stop();
    provider.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ready(page) {
  await page.locator("#pay button:enabled").waitFor({ timeout: 20000 });
}

async function answered(page) {
  const out = page.locator("#result").filter({ hasText: /\S/ });
  await out.waitFor({ timeout: 30000 });
  return out.textContent();
}

test("the example shop: a double-click and a click after the answer are one order and one payment", { timeout: 60000 }, () =>
  withShop(async (page, shop, { posts }) => {
    await page.dblclick("#pay button");
    assert.equal(await answered(page), "Paid (201)");
    await page.$eval("#result", (out) => { out.textContent = ""; });
    await page.click("#pay button");
    assert.equal(await answered(page), "Paid (201)", "a click after the answer");
    assert.equal(posts.length, 1, `one request for three clicks: ${posts}`);
    const orders = await shop.orders();
    assert.equal(orders.length, 1, `one order: ${JSON.stringify(orders)}`);
    assert.equal(await shop.payments(), 1, "one payment at the provider");
  }));

test("the example shop: a reload while the request is at the shop keeps the key; Pay again is one order and one payment", { timeout: 60000 }, () =>
  withShop(async (page, shop, { posts }) => {
    await page.click("#pay button");
    await shop.paused();          // paid at the provider, not yet committed
    await page.reload();
    await ready(page);
    assert.equal(await page.textContent("#result"), "", "the reload came before the answer");
    await page.click("#pay button");
    assert.equal(await answered(page), "Paid (201)");
    assert.ok(posts.length >= 2, `the page sent again after the reload: ${posts}`);
    assert.equal(new Set(posts).size, 1, `every request carried the first key: ${posts}`);
    const orders = await shop.orders();
    assert.equal(orders.length, 1, `one order: ${JSON.stringify(orders)}`);
    assert.equal(await shop.payments(), 1, "one payment at the provider");
  }));

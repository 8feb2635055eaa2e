// The installed tarball in real pages: the quick-start checkout bundled with Vite, esbuild,
// webpack 5 and Rollup, and loaded with no bundler at all, each served by the reference server
// (same origin) under the strict Content-Security-Policy of a payment page (tests/csp/policy.mjs)
// and run in headless Chromium: Pay double-clicked and pressed again after the answer,
// exactly one charge, no policy violation. The Vite build also: reloaded while the request
// is on the wire, and paid in two tabs at once, one charge each time.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { launchChromium, startServer } from "../support/reference.mjs";
import { POLICY } from "../csp/policy.mjs";
import { EXAMPLES, ROOT, copyInto, freshInstall, removeUnlessKept, requireTools, run } from "./lib.mjs";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let browser;
const dirs = [];

before(async () => {
  requireTools("vite", "esbuild", "webpack", "rollup", "chromium", "server");
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  for (const d of dirs) removeUnlessKept(d);
});

/**
 * A new page of `context` that records, into `seen`, the key of each POST to /api/charges
 * (`posts`), each wasm load (`wasmLoads`) and every problem: a policy violation, a page
 * error, console.error, or an HTTP error status other than those in `allowStatus`.
 */
async function watchedPage(context, seen, allowStatus = []) {
  const page = await context.newPage();
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`securitypolicyviolation: ${e.effectiveDirective} ${e.blockedURI}`);
    });
  });
  page.on("pageerror", (e) => seen.problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    // Failed loads are reported below with their URL; the rest of console.error is a problem.
    if (/^Failed to load resource/.test(m.text())) return;
    if (m.type() === "error" || /instantiateStreaming|MIME/i.test(m.text())) seen.problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on("request", (req) => {
    if (req.method() === "POST" && new URL(req.url()).pathname === "/api/charges") {
      seen.posts.push(req.headers()["idempotency-key"]);
    }
  });
  page.on("response", (res) => {
    const path = new URL(res.url()).pathname;
    if (res.status() >= 400 && path !== "/favicon.ico" && !allowStatus.includes(res.status())) {
      seen.problems.push(`HTTP ${res.status()} for ${path}`);
    }
    if (path.endsWith(".wasm")) seen.wasmLoads.push([res.status(), res.headers()["content-type"]]);
  });
  return page;
}

/** Loads the quick start's page at `url` and waits until Pay is enabled. */
async function ready(page, url) {
  if (url) await page.goto(url);
  await page.locator("#pay button:enabled").waitFor({ timeout: 20000 });
}

/** Waits until the page shows an answer, and returns it. */
async function answered(page) {
  const out = page.locator("#result").filter({ hasText: /\S/ });
  await out.waitFor({ timeout: 30000 });
  return out.textContent();
}

/** The reference server's ledger (every charge the anonymous customer was charged). */
async function ledger(server) {
  return (await fetch(`${server.url}/api/charges`)).json();
}

/** Makes the reference server (started with --faults) hold its next answer for `ms` after the commit. */
async function delayNextAnswer(server, ms) {
  const armed = await fetch(`${server.url}/api/faults`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ mode: "delay-after-commit", delay_ms: ms }),
  });
  assert.equal(armed.status, 200, await armed.text());
}

/**
 * Loads the page under `policy` (a header), presses Pay twice before the answer and once
 * after, and checks the page, the request and the ledger.
 */
async function payOnce(staticDir, policy = POLICY) {
  const server = await startServer(["--static", staticDir, "--csp", policy]);
  const context = await browser.newContext();
  const seen = { posts: [], wasmLoads: [], problems: [] };
  const { posts, wasmLoads, problems } = seen;
  try {
    const page = await watchedPage(context, seen);
    await ready(page, `${server.url}/`);
    // The README's own handler, double-clicked (the second click before the answer) and
    // clicked once more after the answer: one request, one charge, and the page still
    // says paid.
    await page.click("#pay button");
    await page.click("#pay button");
    assert.equal(await answered(page), "Paid (201)");
    await page.$eval("#result", (out) => { out.textContent = ""; });
    await page.click("#pay button");
    assert.equal(await answered(page), "Paid (201)", "a click after the answer");

    assert.deepEqual(wasmLoads, [[200, "application/wasm"]], "the wasm is fetched once, as application/wasm");
    assert.equal(posts.length, 1, "one POST for two clicks before the answer and one after it");
    assert.match(posts[0] ?? "", UUID_V4, "the Idempotency-Key header is a UUID v4");

    const charged = await ledger(server);
    assert.equal(charged.count, 1, `exactly one charge: ${JSON.stringify(charged)}`);
    assert.equal(charged.charges.length, 1);
    assert.equal(charged.charges[0].key, posts[0], "the charge carries the page's key");
    assert.equal(charged.charges[0].amount, 4200);
    assert.deepEqual(problems, []);
  } catch (e) {
    e.message += `\n--- page problems ---\n${problems.join("\n")}\n--- server stderr ---\n${server.stderr()}`;
    throw e;
  } finally {
    await context.close();
    await server.stop();
  }
}

describe("bundlers", () => {
  let app;
  before(() => {
    app = freshInstall("bundlers");
    dirs.push(app);
    copyInto(app, EXAMPLES.bundled);
    // rollup.config.js imports the resolve plugin a Rollup project installs beside Rollup:
    // the repository's copy, linked in (its own dependencies resolve from its real path).
    mkdirSync(join(app, "node_modules/@rollup"), { recursive: true });
    symlinkSync(join(ROOT, "node_modules/@rollup/plugin-node-resolve"),
      join(app, "node_modules/@rollup/plugin-node-resolve"));
  });

  test("examples/checkout/build.sh builds with Vite, esbuild, webpack and Rollup", () => {
    run("bash", ["build.sh"], { cwd: app });
    const viteAssets = readdirSync(join(app, "dist-vite/assets"));
    assert.ok(viteAssets.some((f) => f.endsWith(".wasm")), `Vite emitted the wasm: ${viteAssets}`);
    assert.ok(existsSync(join(app, "dist-vite/index.html")));
    for (const dir of ["dist-esbuild", "dist-rollup"]) {
      for (const f of ["index.html", "checkout.js", "idemkey_bg.wasm"]) {
        assert.ok(existsSync(join(app, dir, f)), `${dir}/${f}`);
      }
    }
    // webpack emits the wasm itself, under a content hash.
    const webpackFiles = readdirSync(join(app, "dist-webpack"));
    assert.ok(webpackFiles.some((f) => f.endsWith(".wasm")), `webpack emitted the wasm: ${webpackFiles}`);
    for (const f of ["index.html", "checkout.js"]) assert.ok(webpackFiles.includes(f), `dist-webpack/${f}`);
  });

  // P-double-click-one-charge: the README handler double-clicked and clicked after the answer: one charge
  test("Vite build: a double-click and a click after the answer, one charge", async () => {
    await payOnce(join(app, "dist-vite"));
  });

  test("esbuild build: a double-click and a click after the answer, one charge", async () => {
    await payOnce(join(app, "dist-esbuild"));
  });

  test("webpack 5 build: a double-click and a click after the answer, one charge", async () => {
    await payOnce(join(app, "dist-webpack"));
  });

  test("Rollup build: a double-click and a click after the answer, one charge", async () => {
    await payOnce(join(app, "dist-rollup"));
  });

  /** Runs `fn(server, context, seen)` against the Vite build, served with faults. */
  async function onVite(fn) {
    const server = await startServer(["--static", join(app, "dist-vite"), "--csp", POLICY, "--faults"]);
    const context = await browser.newContext();
    const seen = { posts: [], wasmLoads: [], problems: [] };
    try {
      await fn(server, context, seen);
      assert.equal(new Set(seen.posts).size, 1, `every request sent one key: ${seen.posts}`);
      const charged = await ledger(server);
      assert.equal(charged.count, 1, `exactly one charge: ${JSON.stringify(charged)}`);
      assert.equal(charged.charges[0].key, seen.posts[0], "the charge carries the page's key");
      assert.deepEqual(seen.problems, []);
    } catch (e) {
      e.message += `\n--- page problems ---\n${seen.problems.join("\n")}\n--- server stderr ---\n${server.stderr()}`;
      throw e;
    } finally {
      await context.close();
      await server.stop();
    }
  }

  // P-refresh-finds-key: the README's page reloaded while its request is on the wire: the same key, one charge
  test("Vite build: a reload while the request is on the wire, then Pay again: the same key, one charge", async () => {
    // The server may still be holding the first answer when the second try comes: 409.
    await onVite(async (server, context, seen) => {
      const page = await watchedPage(context, seen, [409]);
      await ready(page, `${server.url}/`);
      await delayNextAnswer(server, 3000);
      const sent = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/api/charges"));
      await page.click("#pay button");
      await sent;
      await page.reload();
      await ready(page);
      assert.equal(await page.textContent("#result"), "", "the reload came before the answer");
      await page.click("#pay button");
      assert.equal(await answered(page), "Paid (201)");
      assert.ok(seen.posts.length >= 2, `the page sent again after the reload: ${seen.posts}`);
    });
  });

  // P-waiting-tab-from-cache: the README's page in two tabs, Pay pressed in both at once: one request, both paid
  test("Vite build: two tabs press Pay at once: one request, one charge, both show it paid", async () => {
    await onVite(async (server, context, seen) => {
      const first = await watchedPage(context, seen);
      const second = await watchedPage(context, seen);
      await ready(first, `${server.url}/`);
      await ready(second, `${server.url}/`);
      // The first tab's request is held at the server while the second tab presses Pay.
      await delayNextAnswer(server, 1500);
      const sent = first.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/api/charges"));
      await first.click("#pay button");
      await sent;
      await second.click("#pay button");
      assert.equal(await answered(first), "Paid (201)");
      assert.equal(await answered(second), "Paid (201)", "the tab that waited shows the stored answer");
      assert.equal(seen.posts.length, 1, `one request from two tabs: ${seen.posts}`);
    });
  });
});

describe("no bundler", () => {
  // P-double-click-one-charge: the same without a bundler
  test("<script type=module> with an import map: a double-click and a click after the answer, one charge", async () => {
    const site = freshInstall("no-bundler");
    dirs.push(site);
    copyInto(site, EXAMPLES.unbundled);
    // The import map is an inline script: the page's policy names it by its hash.
    const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(readFileSync(join(site, "index.html"), "utf8"))[1];
    const hash = createHash("sha256").update(map).digest("base64");
    await payOnce(site, POLICY.replace("script-src 'self'", `script-src 'self' 'sha256-${hash}'`));
  });
});

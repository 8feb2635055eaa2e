// The installed tarball in real pages: the quick-start checkout bundled with Vite, esbuild,
// webpack 5 and Rollup, and loaded with no bundler at all, each served by the reference server
// (same origin) under the strict Content-Security-Policy of a payment page (tests/csp/policy.mjs)
// and run in headless Chromium: Pay double-clicked and pressed again after the answer,
// exactly one charge, no policy violation.
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
 * Loads the page under `policy` (a header), presses Pay twice before the answer and once
 * after, and checks the page, the request and the ledger.
 */
async function payOnce(staticDir, policy = POLICY) {
  const server = await startServer(["--static", staticDir, "--csp", policy]);
  const context = await browser.newContext();
  const problems = [];
  try {
    const page = await context.newPage();
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) => {
        console.error(`securitypolicyviolation: ${e.effectiveDirective} ${e.blockedURI}`);
      });
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      // Failed loads are reported below with their URL; the rest of console.error is a problem.
      if (/^Failed to load resource/.test(m.text())) return;
      if (m.type() === "error" || /instantiateStreaming|MIME/i.test(m.text())) problems.push(`console.${m.type()}: ${m.text()}`);
    });
    const posts = [];
    const wasmLoads = [];
    page.on("request", (req) => {
      if (req.method() === "POST" && new URL(req.url()).pathname === "/api/charges") {
        posts.push(req.headers()["idempotency-key"]);
      }
    });
    page.on("response", (res) => {
      const path = new URL(res.url()).pathname;
      if (res.status() >= 400 && path !== "/favicon.ico") problems.push(`HTTP ${res.status()} for ${path}`);
      if (new URL(res.url()).pathname.endsWith(".wasm")) wasmLoads.push([res.status(), res.headers()["content-type"]]);
    });

    await page.goto(`${server.url}/`);
    await page.locator("#pay button:enabled").waitFor({ timeout: 20000 });
    const answered = () => page.locator("#result").filter({ hasText: /\S/ }).waitFor({ timeout: 30000 });
    // The README's own handler, double-clicked (the second click before the answer) and
    // clicked once more after the answer: one request, one charge, and the page still
    // says paid.
    await page.click("#pay button");
    await page.click("#pay button");
    await answered();
    assert.equal(await page.textContent("#result"), "Paid (201)");
    await page.$eval("#result", (out) => { out.textContent = ""; });
    await page.click("#pay button");
    await answered();
    assert.equal(await page.textContent("#result"), "Paid (201)", "a click after the answer");

    assert.deepEqual(wasmLoads, [[200, "application/wasm"]], "the wasm is fetched once, as application/wasm");
    assert.equal(posts.length, 1, "one POST for two clicks before the answer and one after it");
    assert.match(posts[0] ?? "", UUID_V4, "the Idempotency-Key header is a UUID v4");

    const ledger = await (await fetch(`${server.url}/api/charges`)).json();
    assert.equal(ledger.count, 1, `exactly one charge: ${JSON.stringify(ledger)}`);
    assert.equal(ledger.charges.length, 1);
    assert.equal(ledger.charges[0].key, posts[0], "the charge carries the page's key");
    assert.equal(ledger.charges[0].amount, 4200);
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

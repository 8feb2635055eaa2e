// The framework apps of examples/ (React 19 under <StrictMode> with Vite, Next.js's app
// router, Vue 3 and Svelte 5 with Vite), each built with its framework's own tools against
// the installed tarball and run in headless Chromium against the reference server: Pay
// double-clicked and pressed again after the answer is one charge; a reload while the
// request is on the wire resumes with the same key, one charge; and in React's development
// build, StrictMode's two mounts make one key and leave one listener and no lock behind.
// And init() called twice at once (as effects do) loads the wasm once.
// The frameworks come from examples/frameworks/node_modules (`npm ci` there, make
// tool-npm-examples); each app is built in a directory under it, so they resolve from there.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { freePort } from "../support/net.mjs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { launchChromium, startServer } from "../support/reference.mjs";
import { EXAMPLES, ROOT, freshInstall, removeUnlessKept, requireTools, run } from "./lib.mjs";

const DEPS = join(ROOT, "examples/frameworks");
const BIN = join(DEPS, "node_modules/.bin");
const BUILDS = join(DEPS, ".build");

let browser;
const dirs = [];

before(async () => {
  requireTools("chromium", "server");
  for (const bin of ["vite", "next"]) {
    if (!existsSync(join(BIN, bin))) {
      throw new Error(`${join(BIN, bin)} missing: run \`npm ci\` in examples/frameworks (make tool-npm-examples)`);
    }
  }
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  for (const d of dirs) removeUnlessKept(d);
});

/** examples/<app> copied (with its folders) into a fresh project that has the tarball
 * installed, under examples/frameworks so that the frameworks resolve. */
function project(app) {
  mkdirSync(BUILDS, { recursive: true });
  const dir = freshInstall(app, BUILDS);
  dirs.push(dir);
  for (const f of EXAMPLES.frameworks.filter((f) => f.startsWith(`examples/${app}/`))) {
    const rel = f.slice(`examples/${app}/`.length);
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    cpSync(join(ROOT, f), join(dir, rel));
  }
  return dir;
}

const tool = (name, args, opts = {}) => run(join(BIN, name), args,
  { ...opts, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...opts.env } });

/** `vite build` into dist/ (a development build with NODE_ENV=development). */
function viteBuild(dir, outDir, env = {}) {
  tool("vite", ["build", "--logLevel", "warn", "--outDir", outDir], { cwd: dir, env });
  const assets = readdirSync(join(dir, outDir, "assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")), `Vite emitted the wasm: ${assets}`);
  return join(dir, outDir);
}

/** A page of a fresh browser context that records what the tests check. */
async function openApp(url, { allowStatus = [], waitForPay = true } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const seen = { problems: [], posts: [], events: [], madeKeys: [], wasm: [] };
  page.on("pageerror", (e) => seen.problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    const text = m.text();
    if (m.type() === "debug" && text.startsWith("idemkey ")) seen.events.push(text);
    else if (/^Failed to load resource/.test(text)) return; // reported by the response listener
    else if (m.type() === "error") seen.problems.push(`console.error: ${text}`);
  });
  page.on("request", (req) => {
    if (req.method() === "POST" && new URL(req.url()).pathname === "/api/charges") {
      seen.posts.push(req.headers()["idempotency-key"]);
    }
  });
  page.on("response", (res) => {
    const path = new URL(res.url()).pathname;
    if (path.endsWith(".wasm")) seen.wasm.push([res.status(), res.headers()["content-type"]]);
    if (res.status() >= 400 && path !== "/favicon.ico" && !allowStatus.includes(res.status())) {
      seen.problems.push(`HTTP ${res.status()} for ${path}`);
    }
  });
  // Every key the page makes: idemkey makes a key from 16 bytes of crypto.getRandomValues,
  // as a UUID v4 (RFC 9562), so the page's keys are read off those calls.
  await page.exposeFunction("__madeKey", (k) => seen.madeKeys.push(k));
  await page.addInitScript(() => {
    const getRandomValues = crypto.getRandomValues;
    crypto.getRandomValues = function (array) {
      const out = getRandomValues.call(this, array);
      if (array.length === 16 && array.BYTES_PER_ELEMENT === 1) {
        const b = Array.from(array);
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        const hex = b.map((x) => x.toString(16).padStart(2, "0")).join("");
        window.__madeKey(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
      }
      return out;
    };
  });
  const ready = () => page.locator("#pay button:enabled").waitFor({ timeout: 20000 });
  await page.goto(url);
  if (waitForPay) await ready();
  return { context, page, seen, ready };
}

/** Waits for the answer the page shows after "Paying…", and returns it. */
async function answered(page) {
  const out = page.locator("#result").filter({ hasText: /^(?!Paying…$)\S/ });
  await out.waitFor({ timeout: 30000 });
  return out.textContent();
}

/** Clicks Pay once more and returns what the page then shows: the text is watched, since
 * the same answer again may leave the DOM as it was. */
async function clickAgain(page) {
  await page.evaluate(() => {
    window.__results = [];
    new MutationObserver(() => window.__results.push(document.querySelector("#result").textContent))
      .observe(document.querySelector("#result"), { childList: true, characterData: true, subtree: true });
  });
  await page.click("#pay button");
  await page.waitForFunction(() => window.__results.some((t) => t && t !== "Paying…"), null, { timeout: 30000 });
  return page.evaluate(() => window.__results.findLast((t) => t && t !== "Paying…"));
}

async function ledger(api) {
  return (await fetch(`${api}/api/charges`)).json();
}

/** Checks run against every app. `url` serves the app, `api` is the reference server. */
function checkoutTests(name, where) {
  test(`${name}: a double-click and a click after the answer, one charge`, async () => {
    const { url, api } = where();
    const before = (await ledger(api)).count;
    const { context, page, seen } = await openApp(`${url}/`);
    try {
      await page.click("#pay button");
      await page.click("#pay button");
      assert.equal(await answered(page), "Paid (201)");
      assert.equal(await clickAgain(page), "Paid (201)", "a click after the answer");
      assert.equal(seen.posts.length, 1, "one POST for two clicks before the answer and one after it");
      assert.deepEqual(seen.wasm, [[200, "application/wasm"]], "the wasm is fetched once, as application/wasm");
      const l = await ledger(api);
      assert.equal(l.count, before + 1, `exactly one charge: ${JSON.stringify(l)}`);
      assert.equal(l.charges.at(-1).key, seen.posts[0], "the charge carries the page's key");
      assert.equal(l.charges.at(-1).amount, 4200);
      assert.deepEqual(seen.problems, []);
    } finally {
      await context.close();
    }
  });

  test(`${name}: a reload while the request is on the wire resumes with the same key, one charge`, async () => {
    const { url, api } = where();
    const before = (await ledger(api)).count;
    // The server may still be holding the first answer when the second try comes: 409.
    const { context, page, seen, ready } = await openApp(`${url}/`, { allowStatus: [409] });
    try {
      const armed = await fetch(`${api}/api/faults`, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ mode: "delay-after-commit", delay_ms: 3000 }),
      });
      assert.equal(armed.status, 200, await armed.text());
      const sent = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/api/charges"));
      await page.click("#pay button");
      await sent;
      await page.reload();
      await ready();
      assert.equal(await page.textContent("#result"), "", "the reload came before the answer");
      await page.click("#pay button");
      assert.equal(await answered(page), "Paid (201)");
      assert.ok(seen.posts.length >= 2, `the page sent again after the reload: ${seen.posts}`);
      assert.deepEqual(new Set(seen.posts).size, 1, `every request used the first key: ${seen.posts}`);
      const l = await ledger(api);
      assert.equal(l.count, before + 1, `exactly one charge: ${JSON.stringify(l)}`);
      assert.equal(l.charges.at(-1).key, seen.posts[0]);
      assert.deepEqual(seen.problems, []);
    } finally {
      await context.close();
    }
  });
}

/** A Vite app served by the reference server (with faults), for the length of a describe. */
function servedVite(dirOf) {
  const where = {};
  let server;
  before(async () => {
    server = await startServer(["--static", dirOf(), "--faults"]);
    where.url = where.api = server.url;
  });
  after(() => server?.stop());
  return () => where;
}

describe("React 19 under <StrictMode>, Vite", () => {
  let app;
  let prod;
  let dev;
  before(() => {
    app = project("react");
    prod = viteBuild(app, "dist");
    // React's development build: StrictMode mounts, unmounts and mounts again.
    dev = viteBuild(app, "dist-dev", { NODE_ENV: "development" });
    // The development build is React's own (jsxDEV), where StrictMode mounts twice.
    const bundle = (d) => readdirSync(join(d, "assets")).filter((f) => f.endsWith(".js"))
      .map((f) => readFileSync(join(d, "assets", f), "utf8")).join("");
    assert.match(bundle(dev), /jsxDEV/);
    assert.doesNotMatch(bundle(prod), /jsxDEV/);
  });

  describe("production build", () => checkoutTests("React", servedVite(() => prod)));

  describe("development build", () => {
    const where = servedVite(() => dev);
    checkoutTests("React (development)", where);

    test("StrictMode's two mounts: one key sent, one listener, no lock held", async () => {
      const { url, api } = where();
      const { context, page, seen } = await openApp(`${url}/`);
      try {
        await page.click("#pay button");
        assert.equal(await answered(page), "Paid (201)");
        assert.equal(seen.posts.length, 1);
        const [key] = seen.posts;
        // Nothing is stored before Pay: each mount made a key, and the last one is sent.
        assert.ok(seen.madeKeys.length <= 2, `keys made: ${seen.madeKeys.join(", ")}`);
        assert.equal(seen.madeKeys.at(-1), key, "the key sent is the last mount's");
        // Each event reaches the one Checkout left open: the first mount's was freed.
        const count = (type) => seen.events.filter((e) => e === `idemkey ${type} ${key}`).length;
        assert.equal(count("attempt"), 1, `onEvent deliveries: ${seen.events.join(", ")}`);
        assert.equal(count("response"), 1, `onEvent deliveries: ${seen.events.join(", ")}`);
        // No lock left behind: the scope's lock is free once the answer is stored.
        await page.waitForFunction(async () => (await navigator.locks.query()).held.length === 0,
          null, { timeout: 5000 });
        assert.equal((await ledger(api)).charges.filter((c) => c.key === key).length, 1);
        assert.deepEqual(seen.problems, []);
      } finally {
        await context.close();
      }
    });
  });
});

describe("Vue 3, Vite", () => {
  let dist;
  before(() => { dist = viteBuild(project("vue"), "dist"); });
  checkoutTests("Vue", servedVite(() => dist));
});

describe("Svelte 5, Vite", () => {
  let dist;
  before(() => { dist = viteBuild(project("svelte"), "dist"); });
  checkoutTests("Svelte", servedVite(() => dist));
});

describe("init()", () => {
  test("called twice at once and once more (StrictMode, two components): the wasm loads once", async () => {
    const site = freshInstall("init-twice", BUILDS);
    dirs.push(site);
    writeFileSync(join(site, "index.html"), `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "idemkey": "./node_modules/idemkey/idemkey.js" } }</script>
<script type="module">
  import init, { Checkout } from "idemkey";
  const [a, b] = await Promise.all([init(), init()]);
  const c = await init();
  const checkout = Checkout.open({ scope: "cart-42", endpoint: "/api/charges" });
  document.title = JSON.stringify({ same: a === b && b === c, key: checkout.key });
</script>`);
    const server = await startServer(["--static", site]);
    const { context, page, seen } = await openApp(`${server.url}/`, { waitForPay: false });
    try {
      await page.waitForFunction(() => document.title.startsWith("{"), null, { timeout: 20000 });
      const { same, key } = JSON.parse(await page.title());
      assert.ok(same, "every init() resolves with the one instance");
      assert.match(key, /^[0-9a-f-]{36}$/);
      assert.deepEqual(seen.wasm, [[200, "application/wasm"]], "the wasm is fetched once");
      assert.deepEqual(seen.problems, []);
    } finally {
      await context.close();
      await server.stop();
    }
  });
});

describe("Next.js app router, next build and next start", () => {
  const where = {};
  let server;
  let next;
  before(async () => {
    server = await startServer(["--faults"]);
    const app = project("nextjs");
    // The rewrite to the reference server is fixed when the app is built.
    tool("next", ["build"], { cwd: app, env: { IDEMKEY_API: server.url } });
    const port = await freePort();
    next = spawn(join(BIN, "next"), ["start", "--hostname", "127.0.0.1", "--port", String(port)],
      { cwd: app, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
    let out = "";
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`next start did not start in 30 s:\n${out}`)), 30000);
      const seen = (d) => {
        out += d;
        if (/Ready in|started server/i.test(out)) { clearTimeout(timer); resolve(); }
      };
      next.stdout.on("data", seen);
      next.stderr.on("data", seen);
      next.on("exit", (code) => { clearTimeout(timer); reject(new Error(`next start exited (${code}):\n${out}`)); });
    });
    where.url = `http://127.0.0.1:${port}`;
    where.api = server.url;
  });
  after(async () => {
    if (next && next.exitCode === null) {
      const gone = new Promise((resolve) => next.once("exit", resolve));
      next.kill("SIGTERM");
      await gone;
    }
    await server?.stop();
  });

  test("the server renders the form with Pay disabled (the wasm loads in the browser)", async () => {
    const html = await (await fetch(`${where.url}/`)).text();
    const button = html.match(/<button[^>]*>Pay 42.00 EUR<\/button>/)?.[0];
    assert.ok(button, "the server's HTML has the Pay button");
    assert.match(button, /\bdisabled=""/);
  });

  checkoutTests("Next.js", () => where);
});

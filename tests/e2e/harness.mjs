// End-to-end harness: a real idemkey-server per scenario, Debian's Chromium
// driven by playwright-core, the ledger read straight from the server.
// IDEMKEY_E2E_BROWSER=webkit (or firefox) runs the same scenarios in that browser through
// WebDriver (tests/support/wdpage.mjs): the charge requests are then seen by a relay in
// front of the server, and the page's own errors stand for the console (the browser's
// own "Failed to load resource" lines are out of WebDriver's reach).
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, launchChromium, mustExist, startServer as startReferenceServer } from '../support/reference.mjs';
import { DEMO_POLICY } from '../csp/policy.mjs';
import { launchWebDriverBrowser } from '../support/wdpage.mjs';
import { startTap } from '../support/tap.mjs';

/** The browser the scenarios run in: chromium (playwright-core), webkit or firefox (WebDriver). */
export const BROWSER = process.env.IDEMKEY_E2E_BROWSER || 'chromium';
if (!['chromium', 'webkit', 'firefox'].includes(BROWSER)) {
  throw new Error(`IDEMKEY_E2E_BROWSER must be chromium, webkit or firefox, got ${JSON.stringify(BROWSER)}`);
}

export const SHOTS = path.join(ROOT, 'target', 'e2e');
// IDEMKEY_PKG may point at another wasm-pack output directory.
const PKG = path.resolve(ROOT, process.env.IDEMKEY_PKG || 'pkg');

/**
 * The reference server with the demo and the fault API, on a free port with a fresh database,
 * serving the demo under its strict Content-Security-Policy as `make demo` does (a refused
 * script, style or request is a console error, which fails the scenario).
 */
async function startServer({ providerLatencyMs = 20, extraArgs = [] } = {}) {
  mustExist(path.join(PKG, 'idemkey.js'), 'build the module with `make build`');
  mustExist(path.join(ROOT, 'www', 'index.html'), 'the demo page is part of the repository');
  return startReferenceServer(['--static', 'www', '--pkg', PKG, '--faults', '--csp', DEMO_POLICY,
    '--provider-latency-ms', String(providerLatencyMs), ...extraArgs], { timeoutMs: 15000 });
}

// The browser logs failed loads of resources itself ("Failed to load
// resource: ... 502"). A scenario names the ones it causes on purpose in
// `failedLoads`: HTTP statuses ('402', '502', ...) and/or 'dropped' (a connection
// closed without an answer). Only those, and only for the charge endpoints, are
// the scenario's faults showing; any other console error fails the test.
const DROPPED = 'net::ERR_(EMPTY_RESPONSE|CONNECTION_RESET|CONNECTION_CLOSED|INCOMPLETE_CHUNKED_ENCODING)';
const API_URL = /\/api\/(naive\/)?charges$/;

function failedLoadPattern(failedLoads = []) {
  const statuses = failedLoads.filter((f) => /^\d{3}$/.test(f));
  const unknown = failedLoads.filter((f) => f !== 'dropped' && !statuses.includes(f));
  if (unknown.length) throw new Error(`failedLoads: unknown entries ${unknown.join(', ')}`);
  const parts = [];
  if (statuses.length) parts.push(`the server responded with a status of (${statuses.join('|')}) `);
  if (failedLoads.includes('dropped')) parts.push(DROPPED);
  return parts.length ? new RegExp(`^Failed to load resource: (${parts.join('|')})`) : null;
}

// IDEMKEY_E2E_REQUEST_LOG=file appends each charge request a Chromium scenario sends to the
// file, its key written as its order of first appearance in the scenario (k1, k2, ...): two
// builds of the module are compared by the requests they make (method, path, headers,
// body), not by the keys or the customer ids they draw.
const requestKeys = new Map();
function logRequest(scenario, customer, req) {
  const file = process.env.IDEMKEY_E2E_REQUEST_LOG;
  if (!file) return;
  const keys = requestKeys.get(scenario) || new Map();
  requestKeys.set(scenario, keys);
  const h = req.headers();
  const key = h['idempotency-key'];
  if (!keys.has(key)) keys.set(key, `k${keys.size + 1}`);
  const headers = Object.keys(h).filter((n) => n != 'idempotency-key' && !/^(user-agent|sec-|referer|origin|accept)/.test(n)).sort();
  const line = [scenario, req.method(), new URL(req.url()).pathname, keys.get(key), headers.map((n) => `${n}=${h[n].replace(customer, '<customer>')}`).join(' '),
    req.postData()].join(' | ');
  appendFileSync(file, line + '\n');
}

/** A request of the idemkey checkout: POST /api/charges. */
export const isChargePost = (req) => req.method() === 'POST' && new URL(req.url()).pathname === '/api/charges';

/**
 * Run one scenario: own server, own browser, a fresh customer; afterwards a
 * screenshot of every open page in target/e2e/<name>.png and no console errors
 * (options.failedLoads: the failed charge requests the scenario causes on purpose).
 */
export async function scenario(name, options, body) {
  if (BROWSER !== 'chromium') return webDriverScenario(name, options, body);
  const expected = failedLoadPattern(options.failedLoads);
  const server = await startServer(options);
  let browser;
  const problems = [];
  const networkLogs = [];
  const posts = [];
  try {
    browser = await launchChromium();
    const viewport = options.viewport || { width: 1280, height: 900 };
    const context = await browser.newContext({ viewport });
    const customer = `e2e-${name}-${Math.random().toString(36).slice(2, 10)}`;
    const url = `${server.url}/?customer=${customer}`;
    const pages = [];
    context.on('page', (page) => {
      pages.push(page);
      page.on('console', (msg) => {
        if (msg.type() !== 'error') return;
        const where = msg.location()?.url || '';
        if (expected?.test(msg.text()) && API_URL.test(new URL(where, server.url).pathname)) networkLogs.push(msg.text());
        else problems.push(`console error on ${page.url()}: ${msg.text()} (${where})`);
      });
      page.on('pageerror', (err) => problems.push(`page error on ${page.url()}: ${err.stack || err.message}`));
      page.on('request', (req) => {
        if (!isChargePost(req)) return;
        posts.push({ key: req.headers()['idempotency-key'], page });
        logRequest(name, customer, req);
      });
    });
    const ctx = {
      server, browser, context, customer, url, posts, pages, networkLogs,
      ...pageAndLedger(context, url, server.url, customer),
    };
    try {
      await body(ctx);
    } finally {
      await screenshots(pages, name, { fullPage: true });
    }
  } catch (err) {
    if (problems.length) err.message += `\n--- console and page errors ---\n${problems.join('\n')}`;
    err.message += `\n--- idemkey-server stderr (tail) ---\n${server.stderr()}`;
    throw err;
  } finally {
    if (browser) await browser.close();
    await server.stop();
  }
  assert.deepEqual(problems, [], 'no console errors or page errors');
}

/**
 * What a scenario's body calls in any browser: `openPage()`, a new tab on the demo at `url`
 * with this scenario's customer, ready to use; `ledger()`, the server's ledger for the
 * customer (read from `serverUrl` itself, past any relay).
 */
function pageAndLedger(context, url, serverUrl, customer) {
  return {
    async openPage() {
      const page = await context.newPage();
      await page.goto(url);
      await ready(page);
      return page;
    },
    async ledger() {
      const res = await fetch(`${serverUrl}/api/charges`, { headers: { 'X-Customer-Id': customer } });
      assert.equal(res.status, 200, 'GET /api/charges');
      return res.json();
    },
  };
}

/** A screenshot of each open page in target/e2e/: `<stem>.png`, then `<stem>-tab2.png`, ... */
async function screenshots(pages, stem, shotOptions) {
  mkdirSync(SHOTS, { recursive: true });
  let i = 0;
  for (const page of pages) {
    if (page.isClosed()) continue;
    i += 1;
    const file = path.join(SHOTS, i === 1 ? `${stem}.png` : `${stem}-tab${i}.png`);
    await page.screenshot({ path: file, ...shotOptions }).catch(() => {});
  }
}

/** scenario() in a WebDriver browser: the same context for the body, the same checks. */
async function webDriverScenario(name, options, body) {
  failedLoadPattern(options.failedLoads);   // the same check of the option's entries
  const server = await startServer(options);
  const problems = [];
  const posts = [];
  const postWaiters = [];
  let browser;
  let tap;
  try {
    tap = await startTap(server.url, (req) => {
      if (req.method !== 'POST' || req.path !== '/api/charges') return;
      posts.push({ key: req.key, page: null });
      postWaiters.splice(0).forEach((w) => w());
    });
    browser = await launchWebDriverBrowser(BROWSER);
    const context = await browser.newContext({ viewport: options.viewport || { width: 1280, height: 900 } });
    const customer = `e2e-${name}-${Math.random().toString(36).slice(2, 10)}`;
    const url = `${tap.url}/?customer=${customer}`;
    const pages = [];
    context.on('page', (page) => {
      pages.push(page);
      page.errors.push((e) => problems.push(`${BROWSER}: ${e}`));
      // The next charge request through the relay (the predicate is Playwright's; every
      // request the relay reports here is a charge POST already).
      page.waitForRequest = () => new Promise((resolve) => postWaiters.push(resolve));
    });
    const ctx = {
      server: { ...server, url: tap.url }, browser, context, customer, url, posts, pages, networkLogs: [],
      ...pageAndLedger(context, url, server.url, customer),
    };
    try {
      await body(ctx);
    } finally {
      await screenshots(pages, `${BROWSER}-${name}`, {});
    }
  } catch (err) {
    if (problems.length) err.message += `\n--- page errors ---\n${problems.join('\n')}`;
    err.message += `\n--- idemkey-server stderr (tail) ---\n${server.stderr()}`;
    throw err;
  } finally {
    if (browser) await browser.close();
    if (tap) await tap.close();
    await server.stop();
  }
  assert.deepEqual(problems, [], 'no page errors');
}

// ---------------------------------------------------------------- page helpers

export async function ready(page) {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
}

export async function seq(page, box = '#outcome') {
  return Number(await page.getAttribute(box, 'data-seq'));
}

/** Wait for the outcome box to change after `since`; returns its data-* and texts. */
export async function nextOutcome(page, since, box = '#outcome', timeout = 45000) {
  await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel).dataset.seq) > n, [box, since], { timeout });
  const out = await page.$eval(box, (el) => ({
    ...el.dataset,
    title: el.querySelector('.outcome-title').textContent,
    text: el.querySelector('.outcome-text').textContent,
    visible: el.checkVisibility(),
  }));
  // Every outcome is explained in plain words, on screen.
  assert.ok(out.visible && out.title.trim() && out.text.trim().length >= 40, `an explanation is shown: ${JSON.stringify(out)}`);
  return out;
}

/** Press Pay and wait for the explanation of what happened. */
export async function pay(page) {
  const before = await seq(page);
  await page.click('#pay');
  return nextOutcome(page, before);
}

export async function armFault(page, mode, count = 1) {
  await page.check(`input[name="fault"][value="${mode}"]`);
  await page.selectOption('#fault-count', String(count));
  await page.click('#fault-arm');
  await page.waitForSelector(`#fault-status[data-mode="${mode}"]`);
}

export async function attempt(page) {
  return {
    key: (await page.textContent('#key')).trim(),
    state: await page.getAttribute('#state', 'data-state'),
    attempts: Number(await page.textContent('#attempts')),
  };
}

/** The tries in the timeline, oldest first. */
export async function tries(page, list = '#timeline') {
  const rows = await page.$$eval(`${list} li.try[data-try]`, (els) => els.map((el) => ({ ...el.dataset })));
  return rows.reverse();
}

export async function pickCard(page, digits) {
  await page.click(`[data-card="${digits}"]`);
}

export function assertOneSequence(posts, n = 1) {
  assert.equal(posts.length, n, `expected ${n} POST /api/charges, saw ${posts.length}`);
  const keys = new Set(posts.map((p) => p.key));
  assert.equal(keys.size, 1, `one key for the whole sequence, saw ${[...keys].join(', ')}`);
  assert.ok(posts[0].key, 'the POST carried an Idempotency-Key');
}

// After finish() or reset() a page moves on at once, as a receipt route does; the page the
// customer comes back to pays the same basket again under the same scope. A real page load
// each time (a link, location.assign, a reload), in Chromium, Firefox and WebKit, against
// the reference server: the second order is sent under a new key and charged, in every try.
// PAGES_BROWSERS=chromium,firefox,webkit (the default) picks the engines, for development only.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, mustExist, startServer } from '../support/reference.mjs';
import { ENGINES, poll, waitFor } from './sessions.mjs';

const PKG = path.resolve(ROOT, process.env.IDEMKEY_PKG || 'pkg');
const WWW = path.join(ROOT, 'tests', 'pages', 'www');
const ENGINE_NAMES = (process.env.PAGES_BROWSERS || 'chromium,firefox,webkit').split(',');
const TRIES = 20;
// A try whose pages have not paid twice by then has hung (a submit that never settles).
const HANG_MS = 8000;
// How many tries of a case may be played again because the browser stalled loading the
// first page, before anything of the try happened.
const STALLS = 3;

mustExist(path.join(PKG, 'idemkey.js'), 'build the module with `make build`');
let server;
before(async () => {
  server = await startServer(['--static', WWW, '--pkg', PKG, '--provider-latency-ms', '0']);
});
after(async () => {
  await server?.stop();
});

async function ledger(customer) {
  const res = await fetch(`${server.url}/api/charges`, { headers: { 'X-Customer-Id': customer } });
  assert.equal(res.status, 200, 'GET /api/charges');
  return (await res.json()).charges.map((c) => c.key);
}

/**
 * What went wrong in one try, in words ('' when nothing did): the page of phase 2 must
 * show a new key in state fresh, send it and be charged (not answered from the cache),
 * and the ledger must hold both orders under two keys.
 */
function wrong(report, charges) {
  if (report.hung) {
    const { shown, first } = report;
    const old = shown && shown.key === first?.result.key;
    const saw = !shown ? '' : `, open() showed ${old ? 'the old attempt' : 'a new key'} (${shown.state})`;
    return `hung: the page of phase ${report.phase} never settled (at ${report.hung}${saw})`;
  }
  if (report.phase !== 2) return `the first payment did not end in 201: ${JSON.stringify(report.result)}`;
  const first = report.first.result;
  const { shown, result } = report;
  const problems = [];
  if (shown.key === first.key) problems.push(`open() showed the old attempt (${shown.state})`);
  else if (shown.state !== 'fresh') problems.push(`open() showed a new key in state ${shown.state}`);
  if (result.error) problems.push(`submit rejected: ${result.error}`);
  else if (result.fromCache && result.key === first.key) problems.push('answered from the old cache, nothing sent');
  else if (result.key === first.key) problems.push('sent the old key again');
  else if (result.fromCache) problems.push('answered from a cache');
  else if (result.status !== 201) problems.push(`the second order got ${result.status}`);
  const keys = new Set(charges);
  if (charges.length !== 2 || keys.size !== 2 || !keys.has(first.key) || !keys.has(result.key)) {
    problems.push(`${charges.length} charge(s) in the ledger`);
  }
  return problems.join('; ');
}

/** What the page of a try that hung had come to. */
async function hung(session) {
  const seen = await session.read('main', () => {
    const first = new URLSearchParams(location.search).get('first');
    return { hung: window.step || 'loading', phase: first ? 2 : 1, first: first && JSON.parse(first), shown: window.shown };
  });
  return seen || { hung: 'a page that did not answer', phase: '1 or 2' };
}

/**
 * TRIES tries in `engine`'s browser of: (a second tab of the scope opened first, if `tab`)
 * pay, end the attempt with `end`, leave with `leave` at once, pay again on the next page.
 * Asserts that every try charged the second order under a new key; the message counts
 * what each failed try saw.
 */
async function tries(engine, t, { end, leaves, tab = false }) {
  const outcomes = new Map();
  let stalls = 0;
  for (let i = 0; i < TRIES; i += 1) {
    const id = Math.random().toString(36).slice(2, 10);
    const scope = `cart-${end}-${i}-${id}`;
    const customer = `later-${id}`;
    const leave = leaves[i % leaves.length];
    const session = await engine.session();
    if (tab) {
      await session.go('other', `${server.url}/tab.html?scope=${scope}&customer=${customer}`);
      await waitFor(session, 'other', () => window.ready || null, { what: 'the second tab' });
    }
    await session.go('main', `${server.url}/checkout.html?phase=1&scope=${scope}&customer=${customer}&end=${end}&leave=${leave}`);
    const report = await poll(session, 'main', () => window.report || null, HANG_MS) || await hung(session);
    // A browser whose pages hang (storage that never answers) is not used for the next try.
    if (report.hung) await engine.restart();
    const charged = await ledger(customer);
    // The first page never got its module running (nothing opened, nothing sent): the
    // browser stalled before the try began, which says nothing of finish() or reset(). The
    // try is played again in a new browser, at most STALLS times a case, and said so.
    if (report.hung && report.phase === 1 && ['loading', 'init'].includes(report.hung) && charged.length === 0 && stalls < STALLS) {
      stalls += 1;
      t.diagnostic(`try ${i + 1}: the browser stalled loading the first page (at ${report.hung}, nothing sent): played again`);
      i -= 1;
      continue;
    }
    const what = wrong(report, charged) || 'ok';
    outcomes.set(what, (outcomes.get(what) || 0) + 1);
  }
  const lines = [...outcomes].map(([what, n]) => `${n} of ${TRIES}: ${what}`);
  for (const line of lines) t.diagnostic(line);
  const summary = lines.join('\n  ');
  assert.equal(outcomes.get('ok'), TRIES, `not every try charged the second order:\n  ${summary}`);
}

// The engines play their tries side by side, each in its own browser (one at a time there).
describe('Chromium, Firefox and WebKit side by side', { concurrency: ENGINE_NAMES.length }, () => {
  for (const name of ENGINE_NAMES) {
    describe(name, { concurrency: 1 }, () => {
      // One browser session for every try, started again only after a try that hung.
      let current = null;
      const engine = {
        session: async () => (current ||= await ENGINES[name]()),
        async restart() {
          await current?.close();
          current = null;
        },
      };
      before(() => {
        if (!ENGINES[name]) throw new Error(`PAGES_BROWSERS: unknown engine ${name}`);
      });
      after(() => engine.restart());

      // P-finish-durable: a page that leaves right after finish() leaves nothing a later page takes for the attempt
      test(`finish() then a link or location.assign at once: the next page charges the same basket under a new key`, { timeout: 120000 }, (t) =>
        tries(engine, t, { end: 'finish', leaves: ['link', 'assign'] }));

      // P-finish-durable: the same with a second tab of the scope open
      test(`with a second tab of the scope open, finish() then leaving at once: the next page charges again`, { timeout: 120000 }, (t) =>
        tries(engine, t, { end: 'finish', leaves: ['link', 'assign'], tab: true }));

      // P-reset-durable: a page that leaves right after reset() leaves nothing a later page takes for the attempt
      test(`reset() then leaving at once: the next page charges the same basket under a new key`, { timeout: 120000 }, (t) =>
        tries(engine, t, { end: 'reset', leaves: ['link', 'assign'] }));

      // P-finish-durable: a reload right after finish() shows a new attempt and charges it
      test(`finish() then a reload at once: the reloaded page charges the same basket under a new key`, { timeout: 120000 }, (t) =>
        tries(engine, t, { end: 'finish', leaves: ['reload'] }));
    });
  }
});

// The later page, as the suites of pages that end play it: a checkout page (`page` under
// tests/pages/www, checkout.html by default) pays the basket, ends the attempt
// (finish() or reset()) and leaves at once; the page it leaves to pays the same basket
// again under the same scope. A try passes when that second order is sent under a new key
// and charged, and the ledger holds both orders under two keys.
import assert from 'node:assert/strict';
import { poll, waitFor } from './sessions.mjs';

const TRIES = Number(process.env.LATER_PAGE_TRIES || 20);
// A try whose pages have not paid twice by then has hung (a submit that never settles).
const HANG_MS = 8000;
// How many tries of a case may be played again because the browser stalled loading the
// first page, before anything of the try happened.
const STALLS = 3;

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
 * `count` tries (TRIES unless given) in `engine`'s browser, against `server` (suite.mjs), of:
 * (a second tab of the scope opened first, if `tab`) pay, end the attempt with `end`, leave
 * with `leave` at once, pay again on the next page; `page` and `query` (more of its
 * address) pick the checkout page.
 * Asserts that every try charged the second order under a new key; the message counts
 * what each failed try saw.
 */
export async function tries(server, engine, t, { end, leaves, tab = false, page = 'checkout.html', query = '', count = TRIES }) {
  const outcomes = new Map();
  let stalls = 0;
  for (let i = 0; i < count; i += 1) {
    const id = Math.random().toString(36).slice(2, 10);
    const scope = `cart-${end}-${i}-${id}`;
    const customer = `later-${id}`;
    const leave = leaves[i % leaves.length];
    const session = await engine.session();
    if (tab) {
      await session.go('other', `${server.url}/tab.html?scope=${scope}&customer=${customer}`);
      await waitFor(session, 'other', () => window.ready || null, { what: 'the second tab' });
    }
    await session.go('main', `${server.url}/${page}?phase=1&scope=${scope}&customer=${customer}&end=${end}&leave=${leave}${query}`);
    const report = await poll(session, 'main', () => window.report || null, HANG_MS) || await hung(session);
    // A browser whose pages hang (storage that never answers) is not used for the next try.
    if (report.hung) await engine.restart();
    const charged = await server.ledger(customer);
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
  const lines = [...outcomes].map(([what, n]) => `${n} of ${count}: ${what}`);
  for (const line of lines) t.diagnostic(line);
  const summary = lines.join('\n  ');
  assert.equal(outcomes.get('ok'), count, `not every try charged the second order:\n  ${summary}`);
}


// One cart open in two tabs of one browser. The customer presses Pay in tab B; the server
// holds its answer, so while B's request is on the wire they press Pay in tab A too. B's
// receipt route ends the attempt (finish(), or reset()) in the turn B's payment is
// answered. One charge, and A's Pay resolves with B's answer: the same key, status and
// body. Then the same with A's deadlineMs running out while it waits for B: A rejects
// outcome-unknown (another-tab), and once B has finished, the customer presses Pay again in
// A: still one charge, and A gets B's answer. TRIES tries a case in Chromium, Firefox and
// WebKit (one browser session, two windows: shared storage, as two tabs have).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poll } from './sessions.mjs';
import { eachEngine, pagesServer } from './suite.mjs';

const TRIES = Number(process.env.TWO_TABS_TRIES || 20);
// How long the server holds B's answer after committing its charge: A's Pay is pressed
// well inside it.
const HOLD_MS = 1200;
// A's deadlineMs when it is to run out first: far less than what is left of HOLD_MS once A
// has pressed.
const SHORT_DEADLINE_MS = 400;
// A press still unsettled by then has hung (HOLD_MS and every deadline are far below it).
const HANG_MS = 10000;

const server = pagesServer(['--faults']);

/** What one press settled with, or a `hung` note. */
async function settled(session, win, n) {
  const out = await poll(session, win, (i) => window.presses?.[i] || null, HANG_MS, n);
  return out || { hung: `press ${n + 1} in ${win === 'main' ? 'tab A' : 'tab B'} did not settle` };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Whether `a` is B's answer as it reached B: its key, status and body. */
function isAnswerOf(a, b) {
  return !a.error && !a.hung && a.key === b.key && a.status === b.status && same(a.body, b.body);
}

function show(r) {
  if (r.hung) return r.hung;
  if (r.error) return `rejected ${r.error}${r.reason ? ` (${r.reason})` : ''}`;
  return `resolved ${r.status}${r.fromCache ? ' from the cache' : ''}`;
}

/**
 * One try of `end` (finish or reset) on B's receipt route; with `short`, A's deadline runs
 * out first and A presses again once B has ended the attempt. What went wrong, in words
 * ('' when nothing did).
 */
async function twoTabsTry(session, { end, short }) {
  const id = Math.random().toString(36).slice(2, 10);
  const customer = `tabs-${id}`;
  const where = `${server.url}/cart.html?scope=cart-${id}&customer=${customer}`;
  await server.api('POST', '/api/faults', customer, { mode: 'delay-after-commit', count: 1, delay_ms: HOLD_MS });
  // Both tabs show the cart before anyone pays.
  await session.go('other', `${where}&end=${end}`);
  await session.go('main', `${where}${short ? `&deadline=${SHORT_DEADLINE_MS}` : ''}`);
  for (const win of ['other', 'main']) {
    if (!(await poll(session, win, () => window.ready || null, HANG_MS))) return `the ${win === 'main' ? 'A' : 'B'} tab never loaded`;
  }
  await session.read('other', () => window.pay());
  if (!(await poll(session, 'other', () => window.sent || null, HANG_MS))) return 'tab B never sent';
  // A's Pay is pressed while B's request is on the wire: B has no answer yet.
  if (await session.read('other', () => window.presses[0] !== null)) return 'tab B was answered before A could press Pay';
  await session.read('main', () => window.pay());

  const problems = [];
  const b = await settled(session, 'other', 0);
  if (b.hung || b.error || b.status !== 201 || b.fromCache) return `tab B's own Pay: ${show(b)}${b.message ? `: ${b.message}` : ''}`;
  const ended = await poll(session, 'other', () => (window.ended ? { error: window.endError || null } : null), HANG_MS);
  if (!ended) problems.push(`tab B's receipt route never ran ${end}()`);
  else if (ended.error) problems.push(`${end}() threw on B's receipt route: ${ended.error.message}`);

  let a = await settled(session, 'main', 0);
  if (short) {
    if (a.error !== 'outcome-unknown' || a.reason !== 'another-tab') {
      problems.push(`A's deadline did not run out first: A's Pay ${show(a)}`);
    } else {
      // The customer presses Pay again in A, after B's receipt route has run.
      await session.read('main', () => window.pay());
      a = await settled(session, 'main', 1);
    }
  }
  if (!isAnswerOf(a, b)) {
    const p = short ? "A's second Pay" : "A's Pay";
    problems.push(a.key && a.key !== b.key ? `${p} sent a new key (${a.status}${a.fromCache ? ' from the cache' : ''})` : `${p} ${show(a)}, not B's answer`);
  }
  const charges = await server.ledger(customer);
  if (charges.length !== 1) problems.push(`${charges.length} charges`);
  else if (charges[0] !== b.key) problems.push("the one charge is not under B's key");
  return problems.join('; ');
}

/**
 * One try of the cleared case: B pays; A shows B's payment (posted to it); while B's
 * request is on the wire, the customer closes tab B (its lock goes with it), the record's
 * copies are cleared from the origin's storage, and the customer presses Pay in A. A's
 * lock reads nothing, and A must not take that for a finished attempt: it sends B's key,
 * which the server answers with B's charge.
 */
async function clearedTry(session) {
  const id = Math.random().toString(36).slice(2, 10);
  const customer = `tabs-${id}`;
  const where = `${server.url}/cart.html?scope=cart-${id}&customer=${customer}`;
  await server.api('POST', '/api/faults', customer, { mode: 'delay-after-commit', count: 1, delay_ms: HOLD_MS });
  await session.go('other', where);
  await session.go('main', where);
  for (const win of ['other', 'main']) {
    if (!(await poll(session, win, () => window.ready || null, HANG_MS))) return `the ${win === 'main' ? 'A' : 'B'} tab never loaded`;
  }
  await session.read('other', () => window.pay());
  if (!(await poll(session, 'other', () => window.sent || null, HANG_MS))) return 'tab B never sent';
  const key = await session.read('other', () => window.shownKey());
  if (!(await poll(session, 'main', (k) => (window.shownKey() === k ? true : null), HANG_MS, key))) return "tab A never showed B's payment";
  if (await session.read('other', () => window.presses[0] !== null)) return 'tab B was answered before it was closed';
  await session.go('other', 'about:blank');
  await session.read('main', () => window.clearRecord());
  const cleared = await poll(session, 'main', () => window.cleared || null, HANG_MS);
  if (cleared !== 'done') return `clearing the record failed: ${cleared}`;
  await session.read('main', () => window.pay());
  const a = await settled(session, 'main', 0);
  const problems = [];
  if (a.key && a.key !== key) problems.push(`A's Pay sent a new key (${show(a)})`);
  else if (a.hung || a.error || a.status !== 201) problems.push(`A's Pay ${show(a)}, not B's charge`);
  const charges = await server.ledger(customer);
  if (charges.length !== 1) problems.push(`${charges.length} charges`);
  return problems.join('; ');
}

/** TRIES tries of a case; asserts that every one made one charge and gave A B's answer. */
async function tries(engine, t, spec) {
  const outcomes = new Map();
  for (let i = 0; i < TRIES; i += 1) {
    const session = await engine.session();
    const what = (await (spec.cleared ? clearedTry(session) : twoTabsTry(session, spec))) || 'ok';
    // A browser whose pages hang is not used for the next try.
    if (/never|did not settle/.test(what)) await engine.restart();
    outcomes.set(what, (outcomes.get(what) || 0) + 1);
  }
  const lines = [...outcomes].map(([what, n]) => `${n} of ${TRIES}: ${what}`);
  for (const line of lines) t.diagnostic(line);
  assert.equal(outcomes.get('ok'), TRIES, `not every try made one charge and gave tab A tab B's answer:\n  ${lines.join('\n  ')}`);
}

// The engines play their tries side by side, each in its own browser (one at a time there).
eachEngine((engine) => {
  // P-submit-before-end: Pay pressed in A before B's finish() belongs to B's attempt: its answer, no new key
  // P-tabs-one-sender: Pay in two tabs, B's receipt route calls finish(): one charge
  // P-waiting-tab-from-cache: the tab that waited resolves with B's answer
  test('Pay in tab B, Pay in tab A while B\'s request is on the wire, B finishes on its receipt route: one charge, A gets B\'s answer', { timeout: 180000 }, (t) =>
    tries(engine, t, { end: 'finish', short: false }));

  // P-tabs-one-sender: Pay in two tabs, B's receipt route calls reset(): one charge
  test('the same with reset() on B\'s receipt route: one charge, A gets B\'s answer', { timeout: 180000 }, (t) =>
    tries(engine, t, { end: 'reset', short: false }));

  // P-unknown-resumes: A's deadline ran out (another-tab); Pay again after B's finish(): B's answer, one charge
  test('A\'s deadline runs out while B pays, B finishes, the customer presses Pay again in A: one charge, A gets B\'s answer', { timeout: 180000 }, (t) =>
    tries(engine, t, { end: 'finish', short: true }));

  // P-shown-payment-kept: A shows B's payment, its reads with the lock come back empty: it sends B's key
  test('tab A shows B\'s payment on the wire, B is closed, the origin\'s storage loses the record, the customer presses Pay in A: one charge, under B\'s key', { timeout: 180000 }, (t) =>
    tries(engine, t, { cleared: true }));
});

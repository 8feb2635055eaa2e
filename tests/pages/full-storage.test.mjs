// finish() and reset() where localStorage takes no more writes: the shop's own data has
// filled it to its quota after the payment. The end cannot be made durable there, and the
// page must learn it from the call itself, before it leaves (learnedEndNotDurable below);
// and a page opened afterwards in another tab must not show or answer from the attempt
// that ended: it pays the next order of the same basket under a new key, and is charged.
// Also: an end that localStorage refuses keeps the mark of an earlier order's end there.
// In Chromium, Firefox and WebKit (one browser session, two windows sharing storage).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poll } from './sessions.mjs';
import { eachEngine, pagesServer } from './suite.mjs';

const TRIES = Number(process.env.FULL_STORAGE_TRIES || 10);
// A page that has not reported by then has hung (filling the quota takes well under a second).
const HANG_MS = 15000;

const server = pagesServer();

/**
 * Whether the page learned, from the finish() or reset() call itself, that the end is not
 * durable: the call returned `false` (P-end-not-durable), and threw nothing. `seen` is
 * { thrown, durable } as the page saw them. A storage-fallback event alone does not say
 * it: a later page in another tab reads neither this tab's sessionStorage nor its memory.
 */
function learnedEndNotDurable({ thrown, durable }) {
  return !thrown && durable === false;
}

/**
 * The shop's data and the module's stored entries gone: the next try starts from empty
 * storage. Cleared from both windows: Chromium hands one window's localStorage writes to
 * another one later, and the paying window must see the room made before it pays again.
 */
async function clearStorage(session) {
  for (const win of ['other', 'main']) {
    await session.read(win, () => {
      localStorage.clear();
      sessionStorage.clear();
    });
  }
}

/**
 * One try: phase 1 in the `main` window (pay, fill localStorage, `end`, leave), then the
 * next page in the `other` window. Returns { first, next, charges }; `hung` when a page
 * never reported.
 */
async function fullTry(session, { end, older = false }) {
  const id = Math.random().toString(36).slice(2, 10);
  const customer = `full-${id}`;
  const where = `${server.url}/full.html?scope=cart-${id}&customer=${customer}&end=${end}${older ? '&older=1' : ''}`;
  await session.go('main', `${where}&phase=1`);
  const first = await poll(session, 'main', () => window.report || null, HANG_MS);
  if (!first) return { hung: 'the paying page never reported' };
  let next = null;
  if (first.phase === 'left' || first.phase === 1) {
    await session.go('other', `${where}&phase=2`);
    next = await poll(session, 'other', () => window.report || null, HANG_MS);
    if (!next) return { hung: 'the next page never reported', first };
  }
  await clearStorage(session);
  return { first, next, charges: await server.ledger(customer) };
}

/** What the next page did wrong ('' when nothing): it must show a new key and be charged. */
function wrongNext({ first, next, charges }) {
  const old = first.result.key;
  const { shown, result } = next;
  const problems = [];
  if (shown.key === old) problems.push(`open() in the next tab showed the ended attempt (${shown.state})`);
  if (result.error) problems.push(`the next order's submit rejected: ${result.error}`);
  else if (result.key === old) problems.push(`the next order was ${result.fromCache ? 'answered from the ended attempt, nothing sent' : 'sent under the ended key'}`);
  else if (result.status !== 201) problems.push(`the next order got ${result.status}`);
  const want = first.older ? 3 : 2;
  if (charges.length !== want || new Set(charges).size !== want) problems.push(`${charges.length} charge(s) in the ledger, ${want} orders paid`);
  return problems.join('; ');
}

/** TRIES tries; `judge(try)` says what went wrong ('' when nothing). */
async function tries(engine, t, spec, judge) {
  const outcomes = new Map();
  for (let i = 0; i < TRIES; i += 1) {
    const played = await fullTry(await engine.session(), spec);
    if (played.hung) await engine.restart();
    let what = played.hung;
    if (!what && played.first.result?.status !== 201) what = `the payment did not end in 201: ${JSON.stringify(played.first)}`;
    what = what || judge(played) || 'ok';
    outcomes.set(what, (outcomes.get(what) || 0) + 1);
  }
  const lines = [...outcomes].map(([what, n]) => `${n} of ${TRIES}: ${what}`);
  for (const line of lines) t.diagnostic(line);
  assert.equal(outcomes.get('ok'), TRIES, `not every try:\n  ${lines.join('\n  ')}`);
}

/**
 * The page learned the end was not durable (then the docs tell it to give the next order a
 * new scope: a next tab of the same scope may take the ended attempt for the live one);
 * an end that said it was durable is held to it: the next tab charged the next order.
 */
function judgeEnd(end) {
  return (played) => {
    const problems = [];
    const { thrown, durable } = played.first;
    if (!learnedEndNotDurable({ thrown, durable })) {
      const said = thrown ? `threw ${thrown.name} ${thrown.code}` : `returned ${durable}`;
      problems.push(`${end}() with localStorage full ${said}`);
      const next = wrongNext(played);
      if (next) problems.push(next);
    }
    return problems.join('; ');
  };
}

eachEngine((engine) => {
  // P-end-not-durable: localStorage full: finish() returns false
  // P-finish-durable: localStorage full: finish() says the end is not durable; the next tab charges the next order
  test('localStorage full of the shop\'s data, finish(), the page leaves: the page learned it, and the next tab charges the next order under a new key', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish' }, judgeEnd('finish')));

  // P-reset-durable: localStorage full: reset() says the end is not durable; the next tab charges under a new key
  test('localStorage full of the shop\'s data, reset(), the page leaves: the page learned it, and the next tab charges under a new key', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'reset' }, judgeEnd('reset')));

  // P-finish-durable: a finish() localStorage refuses keeps the mark of an earlier order's finish()
  test('an earlier order finished, then finish() with localStorage full: the earlier order\'s end stays in localStorage', { timeout: 120000 }, (t) =>
    tries(engine, t, { end: 'finish', older: true }, ({ first }) => {
      const { before: was, after: now } = first.older;
      if (!was.length) return 'the earlier order\'s finish() left nothing in localStorage that names its key';
      return now.length ? '' : `the refused finish() removed the earlier order's mark from localStorage (it was in ${was.join(', ')})`;
    }));
});

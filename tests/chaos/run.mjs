// The chaos suite: many checkouts in headless Chromium against the real server, with
// faults from the fault API, the moves real users make, and kill -9 restarts of the
// server; then, for every checkout, one charge and one provider payment per order,
// every paid result in the ledger, nothing unresolved, no page errors.
//
//   SEED=abc CHECKOUTS=200 node tests/chaos/run.mjs
//
// SEED (default: a new one, printed) fixes the plan: moves, faults, quantities and when
// the server is killed; CHECKOUTS (1000), CONCURRENCY (6), CONTEXTS (3), RESTARTS (2),
// PROVIDER_LATENCY_MS (200), CLUSTER=1 (the many-instance setup instead of one server),
// BROWSER (chromium; webkit runs it in WebKit through WebDriver, tabs-webdriver.mjs),
// MOVE (every checkout makes that move, one of plan.mjs's; by default they are drawn).
// Prints `chaos: N checkouts, D duplicate, L lost, U unresolved, E page errors, R restarts,
// S stalled` and exits non-zero unless D, L, U and E are 0, every planned restart
// happened and S is at most 1% of N. S counts the checkouts the browser stalled before
// anything was sent (the harness's failure, not the module's: see checkout.mjs); each is
// listed with the failures, and its ledger is checked all the same.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/reference.mjs';
import { newSeed } from './rng.mjs';
import { MOVE_WEIGHTS, planCheckout, planRestarts } from './plan.mjs';
import { gate as newGate } from './gate.mjs';
import { openBrowser } from './tabs.mjs';
import { openWebDriverBrowser } from './tabs-webdriver.mjs';
import { runCheckout } from './checkout.mjs';
import { judge } from './verdict.mjs';
import { startTarget } from './targets.mjs';

const OUT = path.join(ROOT, 'target', 'chaos');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function intEnv(name, dflt, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

function config() {
  const seed = process.env.SEED || newSeed();
  if (!/^[A-Za-z0-9_.-]{1,40}$/.test(seed)) throw new Error(`SEED must be 1-40 letters, digits, '_', '.' or '-', got ${JSON.stringify(seed)}`);
  const checkouts = intEnv('CHECKOUTS', 1000, 1);
  if (!['chromium', 'webkit'].includes(process.env.BROWSER || 'chromium')) {
    throw new Error(`BROWSER must be chromium or webkit, got ${JSON.stringify(process.env.BROWSER)}`);
  }
  const move = process.env.MOVE || null;
  if (move && !Object.hasOwn(MOVE_WEIGHTS, move)) {
    throw new Error(`MOVE must be one of ${Object.keys(MOVE_WEIGHTS).join(', ')}, got ${JSON.stringify(move)}`);
  }
  return {
    seed,
    move,
    checkouts,
    concurrency: intEnv('CONCURRENCY', 6, 1),
    contexts: intEnv('CONTEXTS', 3, 1),
    restarts: intEnv('RESTARTS', 2, 0),
    providerLatencyMs: intEnv('PROVIDER_LATENCY_MS', 200, 0),
    cluster: ['1', 'true', 'yes'].includes(String(process.env.CLUSTER || '').toLowerCase()),
    browser: process.env.BROWSER || 'chromium',
    // A bound on the whole run, far above its normal length; past it the run fails.
    budgetMs: 300000 + checkouts * 8000,
  };
}

/** GET/POST on the server's API for one customer; waits out a restart and tries again. */
function apiClient(target) {
  async function call(method, pathname, customer, body, base = target.url) {
    for (let i = 1; ; i += 1) {
      await target.whenUp();
      let res;
      try {
        res = await fetch(base + pathname, {
          method,
          headers: { 'X-Customer-Id': customer, ...(body ? { 'Content-Type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(15000),
        });
      } catch (err) {
        if (i >= 10) throw new Error(`${method} ${pathname}: ${err.message}`);
        await sleep(200);
        continue;
      }
      if (!res.ok) throw new Error(`${method} ${pathname} for ${customer}: ${res.status} ${await res.text()}`);
      return res.json();
    }
  }
  return {
    get: (pathname, customer) => call('GET', pathname, customer),
    post: (pathname, customer, body, base) => call('POST', pathname, customer, body, base),
    /** Whether the server has an endpoint (a 404 means it does not). */
    async has(pathname) {
      const res = await fetch(target.url + pathname, { headers: { 'X-Customer-Id': 'chaos-probe' } });
      await res.arrayBuffer();
      return res.status !== 404;
    },
  };
}

function tally(list, key) {
  const counts = {};
  for (const x of list) counts[key(x)] = (counts[key(x)] || 0) + 1;
  return Object.entries(counts).sort().map(([k, n]) => `${k} ${n}`).join(', ');
}

async function main() {
  const cfg = config();
  const started = Date.now();
  const runId = `${cfg.seed}-${started.toString(36)}`;
  const plans = Array.from({ length: cfg.checkouts }, (_, i) => planCheckout(cfg.seed, i, runId, cfg.move));
  const restartPlan = planRestarts(cfg.seed, cfg.checkouts, cfg.restarts);
  console.log(`chaos: seed ${cfg.seed} (repeat the plan with SEED=${cfg.seed}); ${cfg.checkouts} checkouts, `
    + `${cfg.concurrency} at a time over ${cfg.contexts} browser contexts; kill -9 after checkouts `
    + `${restartPlan.map((r) => r.at).join(' and ') || '(none)'}`);
  console.log(`chaos: moves: ${tally(plans, (p) => p.move)}`);
  console.log(`chaos: faults: ${tally(plans.flatMap((p) => p.faults), (f) => (f.mode === 'respond' ? `respond-${f.status}` : f.mode))}; `
    + `receipt worker: ${tally(plans.flatMap((p) => p.workerFaults), (f) => f.mode)}`);
  mkdirSync(OUT, { recursive: true });

  let fatal = null;
  let target;
  let browser;
  let stop;
  const stopped = new Promise((resolve) => { stop = resolve; });
  const fail = (err) => { if (!fatal) fatal = err; stop(); browser?.close(); };
  const budget = setTimeout(() => fail(new Error(`the run took longer than ${cfg.budgetMs / 1000} s`)), cfg.budgetMs);
  for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => fail(new Error(`stopped by ${sig}`)));

  const records = new Array(cfg.checkouts);
  let restarts = 0;
  const restartJobs = [];
  const fired = new Set();
  const gate = newGate();
  try {
    target = await startTarget(cfg, OUT);
    console.log(`chaos: server under test: ${target.describe()}`);
    const api = apiClient(target);
    const receiptsOn = await api.has('/api/receipts');
    console.log(`chaos: receipts ${receiptsOn ? 'on (one receipt per charge is checked)' : 'not served by this server (not checked)'}`);
    browser = cfg.browser === 'chromium' ? await openBrowser(cfg.contexts)
      : await openWebDriverBrowser(cfg.browser, cfg.contexts, target.url);
    console.log(`chaos: browser ${cfg.browser}`);
    const pageUrl = browser.url || target.url;

    const restartAfter = (index) => {
      restartPlan.forEach((r, n) => {
        if (r.at !== index || fired.has(n)) return;
        fired.add(n);
        restartJobs.push(sleep(r.delayMs)
          .then(() => gate.exclusive(() => target.restart()))
          .then(() => { restarts += 1; console.log(`chaos: kill -9 and restart ${restarts} done (during checkout ${index})`); })
          .catch((err) => fail(new Error(`restart failed: ${err.message}`))));
      });
    };

    let next = 0;
    let done = 0;
    const worker = async (w) => {
      while (!fatal && next < cfg.checkouts) {
        const i = next;
        next += 1;
        records[i] = await runCheckout(plans[i], {
          browser, profile: w % cfg.contexts, gate, api, url: pageUrl, receipts: receiptsOn, faultUrl: target.faultUrl, onFirstPay: restartAfter, stopped,
        });
        restartAfter(i);     // a checkout that never sent still triggers its restart
        done += 1;
        if (done % 50 === 0 || done === cfg.checkouts) {
          console.log(`chaos: ${done}/${cfg.checkouts} checkouts played, ${restarts} restarts, ${Math.round((Date.now() - started) / 1000)} s`);
        }
      }
    };
    await Promise.all(Array.from({ length: cfg.concurrency }, (_, w) => worker(w)));
    await Promise.all(restartJobs);
    if (fatal) throw fatal;

    // The reaper finishes what killed requests left behind; then the ledgers are final.
    await sleep(target.settleMs);
    const verdicts = await checkAll(records, api, receiptsOn);
    report(cfg, records, verdicts, restarts, restartPlan.length, Date.now() - started);
  } catch (err) {
    console.error(`chaos: aborted: ${(fatal || err).stack || fatal || err}`);
    console.log(`chaos: ${records.filter(Boolean).length} checkouts, aborted, ${restarts} restarts`);
    process.exitCode = 2;
  } finally {
    clearTimeout(budget);
    await browser?.close();
    await target?.stop();
  }
}

async function checkAll(records, api, receiptsOn) {
  const verdicts = new Array(records.length);
  let next = 0;
  const one = async () => {
    while (next < records.length) {
      const i = next;
      next += 1;
      const c = records[i].plan.customer;
      const ledger = await api.get('/api/charges', c);
      const provider = await api.get('/api/provider', c);
      let receipts = null;
      if (receiptsOn) receipts = await receiptsOf(api, c, ledger.charges.length);
      verdicts[i] = judge(records[i], { charges: ledger.charges, provider, receipts });
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
  return verdicts;
}

/** The customer's receipts once there is one per charge, or what there is after 30 s. */
async function receiptsOf(api, customer, charges) {
  const until = Date.now() + 30000;
  for (;;) {
    const { receipts } = await api.get('/api/receipts', customer);
    if (receipts.length >= charges || Date.now() > until) return receipts;
    await sleep(250);
  }
}

function report(cfg, records, verdicts, restarts, planned, ms) {
  const sum = (k) => verdicts.reduce((s, v) => s + v[k], 0);
  const [D, L, U, E, S] = ['duplicate', 'lost', 'unresolved', 'errors', 'stalled'].map(sum);
  const maxStalled = Math.floor(cfg.checkouts / 100);
  const failing = records.map((r, i) => ({ r, v: verdicts[i] })).filter(({ v }) => v.problems.length);
  writeFileSync(path.join(OUT, 'report.json'), JSON.stringify({
    seed: cfg.seed, checkouts: cfg.checkouts, seconds: Math.round(ms / 1000), restarts, stalled: S,
    failing: failing.map(({ r, v }) => ({ ...r, onPost: undefined, verdict: v })),
  }, null, 1));
  for (const { r, v } of failing.slice(0, 8)) {
    console.error(`\nchaos: checkout ${r.plan.index} (${r.plan.customer}) move ${r.plan.move} ${JSON.stringify(r.plan.params)}`
      + ` faults ${JSON.stringify(r.plan.faults.map((f) => `${f.mode}${f.status ? `-${f.status}` : ''}x${f.count}`))}`);
    for (const p of v.problems) console.error(`  ${p}`);
    console.error(`  requests: ${r.posts.map((p) => `${p.tab}:${(p.key || 'no key').slice(0, 8)}`).join(' ')}`);
    if (r.notes.length) console.error(`  notes: ${r.notes.join('; ')}`);
    console.error(`  outcomes: ${r.outcomes.map((o) => `${o.tab}:${o.kind}${o.status ? `/${o.status}` : ''}${o.reason ? `/${o.reason}` : ''}${o.key ? `:${o.key.slice(0, 8)}` : ''}`).join(' ')}`);
  }
  if (failing.length > 8) console.error(`chaos: ${failing.length - 8} more failing checkouts in target/chaos/report.json`);
  const times = records.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q) => (times[Math.min(times.length - 1, Math.floor(q * times.length))] / 1000).toFixed(1);
  console.log(`chaos: ${Math.round(ms / 1000)} s (seed ${cfg.seed}); one checkout took ${at(0.5)} s (median), ${at(0.95)} s (95th percentile), ${at(1)} s at most`);
  console.log(`chaos: ${records.length} checkouts, ${D} duplicate, ${L} lost, ${U} unresolved, ${E} page errors, ${restarts} restarts, `
    + `${S} stalled (the browser hung before anything was sent: the harness's failure, not the module's; not judged)`);
  if (restarts !== planned) console.error(`chaos: ${planned} restarts were planned, ${restarts} happened`);
  if (S > maxStalled) console.error(`chaos: the harness stalled on ${S} checkouts, more than the ${maxStalled} (1%) a run may leave unjudged`);
  if (D || L || U || E || restarts !== planned || S > maxStalled) process.exitCode = 1;
}

// Everything it started is stopped by now; leave even if a socket or timer of a
// library would keep the process alive (seen with the cluster target).
main().catch((err) => {
  console.error(err.stack || err);
  process.exitCode = 2;
}).finally(() => process.exit());

// The checks in the order they run, the plan said before the first request, and the run.
import { Context, SetupError } from './context.mjs';
import { concurrent, lostAnswer, otherPayload, replay } from './checks/keyed.mjs';
import { emptyKey, longKey, noKey } from './checks/refusals.mjs';
import { scoping } from './checks/scoping.mjs';
import { problemJson, replayed } from './checks/reported.mjs';

export { SetupError };

// `replay` first: its first request is also the proof that the payload and headers are right.
export const CHECKS = [replay, concurrent, otherPayload, noKey, emptyKey, longKey, lostAnswer, scoping, problemJson, replayed];

const applies = (check, o) => !check.applies || check.applies(o);

/** What the run will send, in words, before it sends anything. */
export function plan(o) {
  const run = CHECKS.filter((c) => applies(c, o));
  const posts = run.reduce((n, c) => n + c.requests, 0);
  const gets = o.ledger ? run.reduce((n, c) => n + c.ledgerReads, 0) : 0;
  const headerNames = o.headers.map(([n]) => n);
  const lines = [
    `idemkey-conformance: ${run.filter((c) => c.fatal).length} checks idemkey depends on and ${run.filter((c) => !c.fatal).length} reported, against ${o.method} ${o.url}`,
    `  at most ${posts} ${o.method} requests${gets ? ` and ${gets} GETs of the ledger ${o.ledger}` : ''}, one at a time`
      + ' (two at once in one check), each answer waited for at most'
      + ` ${o.timeoutMs} ms; retries of a key stop after 5 tries; nothing loops`,
    `  keys: fresh UUID v4s in ${o.keyHeader} (${o.keyFormat}), never reused across runs`,
    `  payload: ${JSON.stringify(o.payload)}; other payload: ${JSON.stringify(o.otherPayload)}`,
    `  headers: ${headerNames.length ? headerNames.join(', ') : 'none'} (values not shown)`,
  ];
  if (o.scopeHeader) lines.push(`  customers: two fresh ids in ${o.scopeHeader} (conformance-a-…, conformance-b-…)`);
  else if (o.otherCustomer.length) lines.push(`  second customer: ${o.otherCustomer.map(([n]) => n).join(', ')} replaced`);
  lines.push(`  every accepted request may be a real charge on this server: use a test account or staging`);
  return lines.join('\n');
}

/**
 * Run every check in order; resolves with the results ({ id, title, fatal, why, verdict,
 * sent, got, note, inferred }). A SetupError (the endpoint refuses the shop's own payload)
 * is thrown after the first request.
 */
export async function runChecks(o, { onResult = () => {} } = {}) {
  const ctx = new Context(o);
  const results = [];
  for (const check of CHECKS) {
    let r;
    if (!applies(check, o)) r = { verdict: 'not run', sent: '', got: '', note: check.notRun };
    else {
      try {
        r = await check.run(ctx);
      } catch (e) {
        if (e instanceof SetupError) throw e;
        r = { verdict: 'fail', sent: '', got: '', note: `the check could not run: ${e.message}` };
      }
    }
    const result = { id: check.id, title: check.title, fatal: check.fatal, why: check.why, inferred: false, ...r };
    results.push(result);
    onResult(result);
  }
  return { results, sent: ctx.sent };
}

/** 0 when every check the module depends on passed, 1 otherwise. */
export function exitCode(results) {
  return results.some((r) => r.fatal && r.verdict !== 'pass' && r.verdict !== 'not run') ? 1 : 0;
}

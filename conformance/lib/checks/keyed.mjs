// The checks of one key used more than once: again, at once, with another body, after a lost answer.
import { compareBodies, describe, ok, replayMarker } from '../answers.mjs';
import { RETRIED, SetupError } from '../context.mjs';

const short = (key) => `${key.slice(0, 8)}…`;

/** Work done between two ledger counts, said in words, or null without a ledger. */
function work(before, after) {
  if (before === null) return null;
  const n = after - before;
  return { n, text: `ledger +${n}` };
}

export const replay = {
  id: 'replay',
  title: 'same key and payload twice',
  fatal: true,
  requests: 2,
  ledgerReads: 2,
  why: 'idemkey re-sends the same key and body after a timeout, a 5xx, a reload or a second click; '
    + 'anything but the first answer again is a second charge for the shopper.',
  async run(ctx) {
    const key = ctx.key();
    const before = await ctx.count();
    const first = await ctx.post(this.id, ctx.charge({ key }));
    if (!ok(first)) {
      throw new SetupError(`the first charge with a fresh key was answered ${describe(first)}: `
        + 'the payload (--payload) or the headers (-H) are not what this endpoint accepts, so no check can be judged');
    }
    ctx.firsts.push(first);
    const second = await ctx.post(this.id, ctx.charge({ key }));
    ctx.replays.push(second);
    const w = work(before, await ctx.count());
    const sent = `${ctx.o.method} key ${short(key)} twice, one after the other`;
    const got = `${describe(first)}; then ${describe(second)}`;
    if (second.error || second.status !== first.status) {
      return { verdict: 'fail', sent, got, note: `the second answer is ${second.error ?? second.status}, the first was ${first.status}` };
    }
    const same = compareBodies(first.body, second.body);
    if (!same.equal) {
      return { verdict: 'fail', sent, got, note: `the second body differs from the first (${same.how}): the request ran again` };
    }
    if (w && w.n !== 1) return { verdict: 'fail', sent, got: `${got}; ${w.text}`, note: `the work was done ${w.n} times` };
    return {
      verdict: 'pass', sent, got: w ? `${got}; ${w.text}` : got, inferred: !w,
      note: `same status, bodies ${same.how}${w ? '' : '; done once inferred from the equal answers (no --ledger)'}`,
    };
  },
};

export const concurrent = {
  id: 'concurrent',
  title: 'same key, two requests at once',
  fatal: true,
  requests: 2 + 5,
  ledgerReads: 2,
  why: 'a second tab or a retry can reach the server while the first try still runs; idemkey '
    + 'retries a 409 (after Retry-After) with the same key, so one must run and the other wait or get 409.',
  async run(ctx) {
    const key = ctx.key();
    const before = await ctx.count();
    const pair = await ctx.postTogether(this.id, [ctx.charge({ key }), ctx.charge({ key })]);
    const sent = `${ctx.o.method} key ${short(key)} twice in the same instant, then again until final`;
    const wrong = pair.filter((a) => !ok(a) && a.status !== 409);
    const conflicts = pair.filter((a) => a.status === 409);
    // Then the same key once more, as idemkey would after a 409: the stored answer.
    const after = await ctx.retry(this.id, ctx.charge({ key }), { waitMs: 0 });
    const last = after[after.length - 1];
    ctx.replays.push(last);
    const w = work(before, await ctx.count());
    let got = `${pair.map(describe).join(' | ')}; then ${describe(last)}${after.length > 1 ? ` (try ${after.length})` : ''}`;
    if (w) got += `; ${w.text}`;
    if (wrong.length > 0) {
      return { verdict: 'fail', sent, got, note: `answered ${wrong.map((a) => a.error ?? a.status).join(', ')}: `
        + 'neither the first answer nor 409 (in progress)' };
    }
    const bodies = [...pair.filter(ok), last].filter(ok).map((a) => a.body);
    if (!ok(last)) return { verdict: 'fail', sent, got, note: 'no stored answer came after the conflict' };
    const differing = bodies.map((b) => compareBodies(bodies[0], b)).find((c) => !c.equal);
    if (differing) return { verdict: 'fail', sent, got, note: `two answers differ (${differing.how}): the request ran twice` };
    if (w && w.n !== 1) return { verdict: 'fail', sent, got, note: `the work was done ${w.n} times` };
    const how = conflicts.length === 0 ? 'the second waited and got the same answer'
      : `the other got 409${conflicts.every((a) => a.headers['retry-after'] !== undefined) ? ' with' : ' without'} Retry-After`;
    return { verdict: 'pass', sent, got, inferred: !w, note: `${how}${w ? '' : '; one execution inferred from equal answers (no --ledger)'}` };
  },
};

export const otherPayload = {
  id: 'other-payload',
  title: 'same key, another payload',
  fatal: true,
  requests: 2,
  ledgerReads: 2,
  why: 'a key names one checkout attempt; another body under it must be refused (422 in the IETF draft), '
    + 'never charged nor answered with the first body; a 409 here would be retried by idemkey to no end.',
  async run(ctx) {
    const key = ctx.key();
    const before = await ctx.count();
    const first = await ctx.post(this.id, ctx.charge({ key }));
    ctx.firsts.push(first);
    const other = await ctx.post(this.id, ctx.charge({ key, payload: ctx.o.otherPayload }));
    const w = work(before, await ctx.count());
    const sent = `${ctx.o.method} key ${short(key)} with the payload, then with ${JSON.stringify(ctx.o.otherPayload).slice(0, 40)}`;
    const got = `${describe(first)}; then ${describe(other)}${w ? `; ${w.text}` : ''}`;
    if (!ok(first)) return { verdict: 'fail', sent, got, note: 'the first charge failed' };
    if (other.error) return { verdict: 'fail', sent, got, note: 'no answer to the other payload' };
    if (other.status < 400 || other.status >= 500) {
      const same = ok(other) && compareBodies(first.body, other.body).equal;
      return { verdict: 'fail', sent, got, note: same ? 'the other payload got the first payload\'s answer'
        : `the other payload was accepted (${other.status})` };
    }
    if (RETRIED.includes(other.status)) {
      return { verdict: 'fail', sent, got, note: `${other.status} is retried by idemkey; a reused key needs a final 4xx (422)` };
    }
    if (w && w.n !== 1) return { verdict: 'fail', sent, got, note: `the work was done ${w.n} times` };
    return { verdict: 'pass', sent, got, inferred: !w,
      note: other.status === 422 ? 'refused with 422' : `refused with ${other.status} (final for idemkey; the draft asks 422)` };
  },
};

export const lostAnswer = {
  id: 'lost-answer',
  title: 'retry after the answer was lost',
  fatal: true,
  requests: 1 + 5,
  ledgerReads: 2,
  why: 'what idemkey is for: the charge ran but its answer never arrived (timeout, cut connection, '
    + 'closed tab); the retry with the same key must get the stored answer, not a second charge.',
  async run(ctx) {
    const key = ctx.key();
    const before = await ctx.count();
    const dropped = await ctx.postAndDrop(ctx.charge({ key }));
    const sent = `${ctx.o.method} key ${short(key)}, connection closed as soon as it was sent; the same key again after 250 ms`;
    if (dropped.error) return { verdict: 'fail', sent, got: `no connection: ${dropped.error}`, note: 'could not send' };
    const tries = await ctx.retry(this.id, ctx.charge({ key }));
    const last = tries[tries.length - 1];
    const w = work(before, await ctx.count());
    const got = `${tries.map(describe).join(' | ')}${w ? `; ${w.text}` : ''}`;
    if (!ok(last)) return { verdict: 'fail', sent, got, note: `the retry got no stored answer in ${tries.length} tries` };
    if (w) {
      if (w.n !== 1) return { verdict: 'fail', sent, got, note: `the work was done ${w.n} times` };
      return { verdict: 'pass', sent, got, note: 'the retry got the answer of the one charge' };
    }
    // Without a ledger only the server's own replay marker tells that the lost request ran.
    const marker = replayMarker(last);
    if (marker?.on) return { verdict: 'pass', sent, got, inferred: true, note: `the retry was marked ${marker.name}: ${marker.value} (no --ledger)` };
    return { verdict: 'unknown', sent, got, note: 'without --ledger (or a replay marker) the runner cannot tell '
      + 'whether the lost request was charged as well as the retry' };
  },
};

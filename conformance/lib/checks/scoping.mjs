// Two customers sending one key: two operations, never one customer's answer for the other.
import { compareBodies, describe, ok, replayMarker } from '../answers.mjs';

export const scoping = {
  id: 'customers',
  title: 'two customers, one key',
  fatal: true,
  requests: 4,
  ledgerReads: 0,
  why: 'keys are made in browsers, so two customers can send the same one (a copied record, a bug, '
    + 'a hostile client): a key seen before must never answer another customer with its charge, '
    + 'nor refuse it with a 422 that tells it the key exists.',
  applies: (o) => o.scopeHeader !== null || o.otherCustomer.length > 0,
  notRun: 'give --scope-header NAME (or --other-customer \'Name: value\') to say how the backend tells customers apart',
  async run(ctx) {
    const k1 = ctx.key();
    const k2 = ctx.key();
    const a1 = await ctx.post(this.id, ctx.charge({ key: k1 }));
    const b1 = await ctx.post(this.id, ctx.charge({ key: k1, customer: 'b' }));
    const a2 = await ctx.post(this.id, ctx.charge({ key: k2 }));
    const b2 = await ctx.post(this.id, ctx.charge({ key: k2, customer: 'b', payload: ctx.o.otherPayload }));
    ctx.firsts.push(a1, a2);
    const sent = 'customer A then B with one key and the payload; A then B with another key, B with the other payload';
    const got = [a1, b1, a2, b2].map(describe).join(' | ');
    if (![a1, a2].every(ok)) return { verdict: 'fail', sent, got, note: 'customer A\'s charges failed' };
    if (ok(b1) && (compareBodies(a1.body, b1.body).equal || replayMarker(b1)?.on)) {
      return { verdict: 'fail', sent, got, note: 'customer B got customer A\'s stored answer: keys are not scoped per customer' };
    }
    if (!ok(b1)) {
      const hint = [409, 422].includes(b1.status) ? ': the key is not scoped per customer' : ' (are its --other-customer headers valid?)';
      return { verdict: 'fail', sent, got, note: `customer B's own charge under A's key was answered ${b1.error ?? b1.status}${hint}` };
    }
    if (b2.status === 422) return { verdict: 'fail', sent, got, note: 'customer B got 422 for a key only A had used: it tells B the key exists' };
    if (!ok(b2)) return { verdict: 'fail', sent, got, note: `customer B's charge under A's second key was answered ${b2.error ?? b2.status}` };
    return { verdict: 'pass', sent, got, note: 'each customer got a charge of its own under the shared keys' };
  },
};

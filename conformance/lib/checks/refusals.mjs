// The keys a backend must refuse, with nothing done: none, an empty one, an over-long one.
import { describe } from '../answers.mjs';

// Stripe and the reference server take at most 255 characters, a UUID is 36: 1,024 is over-long
// for any key store and still far under the header size every HTTP server accepts.
export const LONG_KEY_LENGTH = 1024;

function refusal({ id, title, why, key }) {
  return {
    id,
    title,
    fatal: true,
    requests: 1,
    ledgerReads: 2,
    why,
    async run(ctx) {
      const k = key(ctx);
      const before = await ctx.count();
      const a = await ctx.post(id, ctx.charge(k === undefined ? {} : { key: k, rawKey: true }));
      const n = before === null ? null : (await ctx.count()) - before;
      const what = k === undefined ? `no ${ctx.o.keyHeader}` : k === '' ? `${ctx.o.keyHeader} empty`
        : `${ctx.o.keyHeader} of ${k.length} characters`;
      const sent = `${ctx.o.method} with the payload and ${what}`;
      const got = `${describe(a)}${n === null ? '' : `; ledger +${n}`}`;
      if (a.error) return { verdict: 'fail', sent, got, note: 'no answer' };
      if (a.status < 400 || a.status >= 500) {
        return { verdict: 'fail', sent, got, note: `accepted (${a.status}), not refused with a 4xx` };
      }
      if (n !== null && n !== 0) return { verdict: 'fail', sent, got, note: `refused, yet the work was done ${n} times` };
      return { verdict: 'pass', sent, got, inferred: n === null,
        note: `refused with ${a.status}${n === null ? '; nothing done inferred from the 4xx (no --ledger)' : ''}` };
    },
  };
}

export const noKey = refusal({
  id: 'no-key',
  title: 'no key',
  why: 'idemkey sends its key in this header; a backend that charges without one is not reading the key '
    + 'there (another header name?) or not at all, and deduplicates nothing.',
  key: () => undefined,
});

export const emptyKey = refusal({
  id: 'malformed-key',
  title: 'malformed (empty) key',
  why: 'an empty key is no key: taken as one, every request that lost its key by mistake would share it '
    + '(one customer would get another\'s answer) or be charged unguarded.',
  key: () => '',
});

export const longKey = refusal({
  id: 'over-long-key',
  title: `over-long key (${LONG_KEY_LENGTH} characters)`,
  why: 'keys are stored until they expire; a backend without a length limit lets one client fill its key '
    + 'store. idemkey\'s keys are 36-character UUIDs.',
  key: (ctx) => {
    let k = '';
    while (k.length < LONG_KEY_LENGTH) k += ctx.key();
    return k.slice(0, LONG_KEY_LENGTH);
  },
});

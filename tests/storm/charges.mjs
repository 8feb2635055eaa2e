// The valid charges of the storm: which keys were charged (201), which were refused,
// and whether the server's ledger holds each charged key exactly once and nothing else.
import { chargeBody, chunked } from './cases.mjs';
import { chargeRequest, exchange, finals, head } from './wire.mjs';

const CUSTOMERS = 4;

export class Charges {
  constructor(prefix, rng) {
    this.prefix = prefix;
    this.rng = rng;
    this.serial = 0;
    this.done = []; // { customer, key, body, status, response }
    this.refused = 0;
    this.replays = 0;
    this.customers = Array.from({ length: CUSTOMERS }, (_, i) => `${prefix}-c${i}`);
  }

  /** What a variant's `build` may use: ids, fresh charges, replays, random bytes. */
  context(rng) {
    const int = (n) => Math.floor(rng() * n);
    const ids = () => ({ customer: this.customers[int(CUSTOMERS)], key: `k-${this.serial++}` });
    return {
      int,
      ids,
      customer: this.customers[int(CUSTOMERS)],
      newKey: () => `k-${this.serial++}`,
      randomBytes: (n) => Buffer.from(Array.from({ length: n }, () => int(256))),
      charge: ({ body, chunkedBody = false, refused = false } = {}) => {
        const { customer, key } = ids();
        const card = int(2) ? ',"card":"4242 4242 4242 4242"' : '';
        const b = Buffer.isBuffer(body) ? body : Buffer.from(body ?? chargeBody(1 + int(99999), card));
        const parts = chunkedBody
          ? [head('POST /api/charges HTTP/1.1', ['Host: storm', 'Connection: close', 'Content-Type: application/json',
            `X-Customer-Id: ${customer}`, `Idempotency-Key: ${key}`, 'Transfer-Encoding: chunked']), chunked(b)]
          : [chargeRequest({ customer, key, body: b })];
        return { parts, charge: { customer, key, body: b, refused } };
      },
      replay: () => {
        if (this.done.length === 0) return this.context(rng).charge();
        const d = this.done[int(this.done.length)];
        return { parts: [chargeRequest(d)], charge: { ...d, replayOf: d } };
      },
    };
  }

  /** Records the answer to a charge; returns a failure `{ what, detail }` or null. */
  settle(charge, r, { replay = false } = {}) {
    if (charge.replayOf) {
      if (!r) return null; // counted as "no answer" already
      this.replays++;
      const d = charge.replayOf;
      if (!replay) return null;
      if (r.status !== d.status || !r.body.equals(d.response) || r.headers['idempotent-replayed'] !== 'true') {
        return { what: 'replay differs from the first answer', detail: `${charge.key}: ${r.status} replayed=${r.headers['idempotent-replayed']}` };
      }
      return null;
    }
    if (charge.refused || !r || r.status !== 201) {
      this.refused++;
      return null;
    }
    this.done.push({ customer: charge.customer, key: charge.key, body: charge.body, status: r.status, response: r.body });
    return null;
  }

  /** Reads every storm customer's ledger: each 201 key once, no other key. */
  async verifyLedger(addr) {
    const problems = [];
    const expected = new Map(this.done.map((d) => [`${d.customer}/${d.key}`, 0]));
    for (const customer of this.customers) {
      const x = await exchange(addr, [head('GET /api/charges HTTP/1.1', ['Host: storm', 'Connection: close', `X-Customer-Id: ${customer}`])]);
      const r = finals(x)[0];
      if (r?.status !== 200) {
        problems.push({ what: 'ledger unreadable', detail: `${customer}: ${r?.status ?? x.closedBy}` });
        continue;
      }
      for (const ch of JSON.parse(r.body.toString('utf8')).charges) {
        const id = `${customer}/${ch.key}`;
        if (!expected.has(id)) problems.push({ what: 'charge from a refused or unanswered request', detail: id });
        else expected.set(id, expected.get(id) + 1);
      }
    }
    for (const [id, n] of expected) {
      if (n === 0) problems.push({ what: 'lost valid charge', detail: id });
      if (n > 1) problems.push({ what: 'doubled valid charge', detail: `${id} x${n}` });
    }
    return problems;
  }

  summary() {
    return { charged: this.done.length, replays: this.replays, refusedOrUnanswered: this.refused };
  }
}

// What every check shares: fresh keys, the two customers' headers, requests built from the
// shop's payload, the ledger count, and the answers seen so far (for the reported checks).
import { randomBytes, randomUUID } from 'node:crypto';
import { ledgerCount, send, sendAndDrop, sendTogether } from './http.mjs';

/** The shop's payload, headers or ledger are not what its server accepts: nothing can be judged. */
export class SetupError extends Error {}

/** The statuses idemkey retries with the same key (besides a network error or a timeout). */
export const RETRIED = [408, 409, 425, 429, 500, 502, 503, 504];

export class Context {
  constructor(o) {
    this.o = o;
    this.sent = 0;
    /** Error answers seen (4xx, 5xx), for the problem+json check: { check, answer }. */
    this.errors = [];
    /** Answers that are replays for certain, and first answers, for the marker check. */
    this.replays = [];
    this.firsts = [];
    const tag = randomBytes(4).toString('hex');
    const a = [...o.headers];
    let b = null;
    if (o.scopeHeader || o.otherCustomer.length > 0) {
      const names = new Set(o.otherCustomer.map(([n]) => n.toLowerCase()));
      b = [...o.headers.filter(([n]) => !names.has(n.toLowerCase())), ...o.otherCustomer];
    }
    if (o.scopeHeader) {
      a.push([o.scopeHeader, `conformance-a-${tag}`]);
      b.push([o.scopeHeader, `conformance-b-${tag}`]);
    }
    this.customers = { a, b };
  }

  /** A fresh UUID v4, as idemkey makes one per checkout attempt. */
  key() {
    return randomUUID();
  }

  /** The header value of a key, bare or as an sf-string. */
  keyValue(key) {
    return this.o.keyFormat === 'sf-string' ? `"${key.replace(/[\\"]/g, '\\$&')}"` : key;
  }

  /** A charge request; key undefined sends none, a string (even empty) sends it as given. */
  charge({ key, payload = this.o.payload, customer = 'a', rawKey = false } = {}) {
    const headers = [...this.customers[customer], ['Content-Type', 'application/json']];
    if (key !== undefined) headers.push([this.o.keyHeader, rawKey ? key : this.keyValue(key)]);
    return { url: this.o.url, method: this.o.method, headers, body: JSON.stringify(payload), timeoutMs: this.o.timeoutMs };
  }

  async post(check, req) {
    this.sent += 1;
    return this.seen(check, await send(req));
  }

  async postTogether(check, reqs) {
    this.sent += reqs.length;
    return (await sendTogether(reqs)).map((a) => this.seen(check, a));
  }

  async postAndDrop(req) {
    this.sent += 1;
    return sendAndDrop(req);
  }

  seen(check, answer) {
    if (answer.status >= 400) this.errors.push({ check, answer });
    return answer;
  }

  /** The ledger's count for a customer, or null without --ledger. */
  async count(customer = 'a') {
    if (!this.o.ledger) return null;
    try {
      return await ledgerCount({
        url: this.o.ledger, path: this.o.ledgerCount, headers: this.customers[customer], timeoutMs: this.o.timeoutMs,
      });
    } catch (e) {
      throw new SetupError(`--ledger: ${e.message}`);
    }
  }

  /**
   * Retry a key the way idemkey does after a lost or refused try: on an answer it retries
   * (409 in progress, 5xx, ...), wait Retry-After (at most 5 s) or `waitMs`, at most `tries`
   * times. Resolves with every answer, the last one final or the last try's.
   */
  async retry(check, req, { tries = 5, waitMs = 250 } = {}) {
    const answers = [];
    for (let i = 0; i < tries; i++) {
      await sleep(i === 0 ? waitMs : retryAfterMs(answers[i - 1]) ?? 1000);
      const a = await this.post(check, req);
      answers.push(a);
      if (!a.error && !RETRIED.includes(a.status)) break;
    }
    return answers;
  }
}

/** Retry-After in ms (seconds or an HTTP date), capped at 5 s; null when absent or unreadable. */
export function retryAfterMs(answer) {
  const v = answer?.headers?.['retry-after'];
  if (v === undefined) return null;
  const ms = /^\d+$/.test(v.trim()) ? Number(v) * 1000 : Date.parse(v) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 5000) : null;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

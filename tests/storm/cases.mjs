// What the storm sends: each kind is a list of variants; a variant builds the bytes of
// one exchange and says what the server must answer. `valid` variants are real charges
// (tracked in the ledger check); every other one must be refused without a 5xx.
import { chargeRequest, head } from './wire.mjs';

const B = (s) => Buffer.from(s, 'latin1');
const GET = (path, lines = []) => head(`GET ${path} HTTP/1.1`, ['Host: storm', 'Connection: close', ...lines]);
const HEALTH = GET('/healthz');
const chargeBody = (amount, extra = '') => `{"amount":${amount},"currency":"usd","items":[{"sku":"storm"}]${extra}}`;
/** A valid charge body of exactly `size` bytes (padded in a string member). */
const bodyOfSize = (size) => {
  const base = chargeBody(1, ',"pad":""');
  return base.slice(0, -2) + 'x'.repeat(size - base.length) + '"}';
};
/** A request head for POST /api/charges with `lines` instead of the usual Content-Length. */
const chargeHead = (c, key, lines) => head('POST /api/charges HTTP/1.1',
  ['Host: storm', 'Connection: close', 'Content-Type: application/json', `X-Customer-Id: ${c.customer}`,
    `Idempotency-Key: ${key}`, ...lines]);
const chunked = (body, size = 4096) => {
  const parts = [];
  for (let i = 0; i < body.length; i += size) {
    const piece = body.subarray(i, i + size);
    parts.push(B(`${piece.length.toString(16)}\r\n`), piece, B('\r\n'));
  }
  parts.push(B('0\r\n\r\n'));
  return Buffer.concat(parts);
};
const TLS_HELLO = Buffer.from('16030100a5010000a10303' + '00'.repeat(32) + '000020c02bc02fc02cc030cca9cca8c013c014009c009d002f0035000a0100005800000013', 'hex');
const H2_PREFACE = B('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * `expect`: final statuses allowed; `answers`: how many final responses must come (0: none
 * needed). `hyper`: broken framing, which hyper refuses itself: its answer has an empty body
 * instead of a problem, and it may close without one (an HTTP/2 preface).
 */
const v = (name, build, expect, more = {}) => ({ name, build, expect, answers: 1, ...more });
const HYPER = { hyper: true };

export const KINDS = {
  valid: {
    weight: 30,
    variants: [
      v('charge', (c) => c.charge(), [201], { valid: true }),
      v('charge', (c) => c.charge(), [201], { valid: true }),
      v('replay', (c) => c.replay(), [201], { valid: true, replay: true }),
      v('healthz', () => ({ parts: [HEALTH] }), [200], { valid: true }),
      v('charge-chunked', (c) => c.charge({ chunkedBody: true }), [201], { valid: true }),
      v('charge-64KiB-exact', (c) => c.charge({ body: bodyOfSize(64 * 1024) }), [201], { valid: true }),
      v('charge-half-close', (c) => ({ ...c.charge(), halfClose: true }), [201], { valid: true, halfClose: true }),
      v('healthz-half-close', () => ({ parts: [HEALTH], halfClose: true }), [200], { valid: true, halfClose: true }),
    ],
  },
  method: {
    weight: 6,
    variants: [
      v('space-in-method', () => ({ parts: [head('GE T /healthz HTTP/1.1', ['Host: storm'])] }), [400], HYPER),
      v('nul-in-method', () => ({ parts: [head('G\x00T /healthz HTTP/1.1', ['Host: storm'])] }), [400], HYPER),
      v('empty-method', () => ({ parts: [head(' /healthz HTTP/1.1', ['Host: storm'])] }), [400], HYPER),
      v('lowercase-method', () => ({ parts: [head('get /healthz HTTP/1.1', ['Host: storm', 'Connection: close'])] }), [405]),
      v('long-method', () => ({ parts: [head(`${'X'.repeat(2000)} /api/charges HTTP/1.1`, ['Host: storm', 'Connection: close'])] }), [405, 400]),
      v('utf8-method', () => ({ parts: [head('G\xc3\xa9T /healthz HTTP/1.1', ['Host: storm'])] }), [400], HYPER),
      v('connect', () => ({ parts: [head('CONNECT storm:443 HTTP/1.1', ['Host: storm:443'])] }), [400]),
    ],
  },
  path: {
    weight: 6,
    variants: [
      v('asterisk', () => ({ parts: [GET('*')] }), [400]),
      v('no-slash', () => ({ parts: [GET('healthz')] }), [400]),
      v('percent-garbage', () => ({ parts: [GET('/%zz%')] }), [404, 400]),
      v('dot-dot', () => ({ parts: [GET('/../../etc/passwd')] }), [404, 400]),
      v('del-char', () => ({ parts: [GET('/heal\x7fthz')] }), [400], HYPER),
      v('non-ascii', () => ({ parts: [GET('/h\xc3\xa9')] }), [404]),
      v('nul', () => ({ parts: [GET('/healthz\x00')] }), [400], HYPER),
      v('absolute-form', () => ({ parts: [GET('http://storm/healthz')] }), [200]),
      v('uri-10KiB', () => ({ parts: [GET(`/api/${'a'.repeat(10 * 1024)}`)] }), [414]),
      v('uri-70KiB', () => ({ parts: [GET(`/api/${'a'.repeat(70 * 1024)}`)] }), [431], HYPER),
    ],
  },
  header: {
    weight: 10,
    variants: [
      v('no-colon', () => ({ parts: [GET('/healthz', ['No colon here'])] }), [400], HYPER),
      v('space-before-colon', () => ({ parts: [GET('/healthz', ['X-A : 1'])] }), [400], HYPER),
      v('space-in-name', () => ({ parts: [GET('/healthz', ['Bad Name: v'])] }), [400], HYPER),
      v('ctl-in-value', () => ({ parts: [GET('/healthz', ['X-A: a\x01b'])] }), [400], HYPER),
      v('nul-in-value', () => ({ parts: [GET('/healthz', ['X-A: a\x00b'])] }), [400], HYPER),
      v('cr-in-value', () => ({ parts: [GET('/healthz', ['X-A: a\rb'])] }), [400], HYPER),
      v('obs-fold', () => ({ parts: [GET('/healthz', ['X-A: a', ' folded'])] }), [400], HYPER),
      v('bare-lf', () => ({ parts: [B('GET /healthz HTTP/1.1\nHost: storm\nConnection: close\n\n')] }), [200]),
      v('no-host', () => ({ parts: [head('GET /healthz HTTP/1.1', ['Connection: close'])] }), [400]),
      v('two-hosts', () => ({ parts: [GET('/healthz', ['Host: other'])] }), [400]),
      v('utf8-customer', (c) => ({ parts: [chargeRequest({ ...c.ids(), body: chargeBody(1), extra: ['X-Customer-Id: \xc3\xa9'] })] }), [400]),
      v('two-keys', (c) => ({ parts: [chargeRequest({ ...c.ids(), body: chargeBody(1), extra: ['Idempotency-Key: other'] })] }), [400]),
      v('two-content-types', (c) => ({ parts: [chargeRequest({ ...c.ids(), body: chargeBody(1), extra: ['Content-Type: text/plain'] })] }), [400]),
      v('content-type-json-twice', (c) => ({ parts: [chargeRequest({ ...c.ids(), body: chargeBody(1), extra: ['Content-Type: application/json'] })] }), [400]),
    ],
  },
  oversized: {
    weight: 5,
    variants: [
      v('header-100KiB', () => ({ parts: [GET('/healthz', [`X-Big: ${'b'.repeat(100 * 1024)}`])] }), [431], HYPER),
      v('head-40KiB', () => ({ parts: [GET('/healthz', Array.from({ length: 40 }, (_, i) => `X-H${i}: ${'h'.repeat(1000)}`))] }), [431], HYPER),
      v('101-headers', () => ({ parts: [GET('/healthz', Array.from({ length: 99 }, (_, i) => `X-H${i}: 1`))] }), [431], HYPER),
      v('100-headers', () => ({ parts: [GET('/healthz', Array.from({ length: 98 }, (_, i) => `X-H${i}: 1`))] }), [200]),
      v('1000-headers', () => ({ parts: [GET('/healthz', Array.from({ length: 1000 }, (_, i) => `X-H${i}: 1`))] }), [431], HYPER),
    ],
  },
  length: {
    weight: 8,
    variants: [
      v('not-a-number', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: abc'])] }), [400], HYPER),
      v('negative', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: -1'])] }), [400], HYPER),
      v('plus-sign', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: +2']), B('{}')] }), [400], HYPER),
      v('list', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 2, 2']), B('{}')] }), [400], HYPER),
      v('twice-equal', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 2', 'Content-Length: 2']), B('{}')] }), [400]),
      v('twice-different', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 2', 'Content-Length: 3']), B('{}x')] }), [400], HYPER),
      v('u64-max', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 18446744073709551615'])] }), [431], HYPER),
      v('beyond-u64', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 99999999999999999999999'])] }), [400], HYPER),
      v('longer-than-sent', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 1000']), B(chargeBody(1))], halfClose: true }), [400]),
      v('shorter-than-sent', () => ({ parts: [head('GET /healthz HTTP/1.1', ['Host: storm', 'Content-Length: 5']), B('hello'), B('GARBAGE\r\n\r\n')] }), [200, 400], HYPER),
      v('with-chunked', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Content-Length: 5', 'Transfer-Encoding: chunked']), B('0\r\n\r\n')] }), [400]),
    ],
  },
  chunked: {
    weight: 8,
    variants: [
      v('bad-size', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked']), B('zz\r\nhello\r\n0\r\n\r\n')] }), [400]),
      v('size-overflow', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked']), B('fffffffffffffffffffff\r\nx\r\n')] }), [400, 413]),
      v('no-crlf-after-data', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked']), B('2\r\n{}XX0\r\n\r\n')] }), [400]),
      v('gzip-chunked', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: gzip, chunked']), chunked(B(chargeBody(1)))] }), [400]),
      v('chunked-twice', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked']), chunked(B(chargeBody(1)))] }), [400]),
      v('identity', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: identity']), B(chargeBody(1))] }), [400], HYPER),
      v('not-last', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked, gzip']), chunked(B(chargeBody(1)))] }), [400], HYPER),
      v('on-http-1.0', () => ({ parts: [head('POST /api/charges HTTP/1.0', ['Transfer-Encoding: chunked']), B('0\r\n\r\n')] }), [400], HYPER),
      v('truncated-half-close', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked']), B('10\r\n{"amount"')], halfClose: true }), [400]),
      v('long-extension', (c) => ({ parts: [chargeHead(c, c.newKey(), ['Transfer-Encoding: chunked']), B(`2;${'e'.repeat(100 * 1024)}\r\n{}\r\n0\r\n\r\n`)] }), [400, 413]),
    ],
  },
  body: {
    weight: 8,
    variants: [
      v('64KiB+1', (c) => c.charge({ body: bodyOfSize(64 * 1024 + 1), refused: true }), [413]),
      v('1MiB', (c) => c.charge({ body: bodyOfSize(1024 * 1024), refused: true }), [413]),
      v('declared-16MiB', (c) => ({ parts: [chargeHead(c, c.newKey(), [`Content-Length: ${16 * 1024 * 1024}`]), Buffer.alloc(256 * 1024, 0x20)], halfClose: true }), [413]),
      v('chunked-200KiB', (c) => c.charge({ body: bodyOfSize(200 * 1024), chunkedBody: true, refused: true }), [413]),
      v('invalid-utf8', (c) => c.charge({ body: B('{"amount":1,"currency":"us\xff\xfe"}'), refused: true }), [400]),
      v('nested-100000', (c) => c.charge({ body: B('['.repeat(100000)), refused: true }), [400, 413]),
      v('nested-objects', (c) => c.charge({ body: B('{"a":'.repeat(10000)), refused: true }), [400]),
      v('duplicate-amount', (c) => c.charge({ body: B('{"amount":0,"amount":100,"currency":"usd"}'), refused: true }), [400]),
      v('duplicate-nested', (c) => c.charge({ body: B('{"amount":1,"currency":"usd","items":[{"sku":"a","sku":"b"}]}'), refused: true }), [400]),
      v('bom', (c) => c.charge({ body: B('\xef\xbb\xbf' + chargeBody(1)), refused: true }), [400]),
      v('trailing-garbage', (c) => c.charge({ body: B(chargeBody(1) + ' x'), refused: true }), [400]),
      v('not-json', (c) => c.charge({ body: B('amount=1&currency=usd'), refused: true }), [400]),
    ],
  },
  protocol: {
    weight: 8,
    variants: [
      v('pipelined-3', () => ({ parts: [Buffer.concat([head('GET /healthz HTTP/1.1', ['Host: storm']), head('GET /api/nope HTTP/1.1', ['Host: storm']), HEALTH])] }), [200, 404], { answers: 3 }),
      v('pipelined-then-garbage', () => ({ parts: [Buffer.concat([head('GET /healthz HTTP/1.1', ['Host: storm']), B('\x16\x03\x01garbage\r\n\r\n')])] }), [200, 400], { ...HYPER, answers: 2 }),
      v('http-1.0', () => ({ parts: [head('GET /healthz HTTP/1.0')] }), [200]),
      v('http-1.0-keep-alive', () => ({ parts: [head('GET /healthz HTTP/1.0', ['Connection: keep-alive'])], halfClose: true }), [200]),
      v('http-2.0-line', () => ({ parts: [head('GET /healthz HTTP/2.0', ['Host: storm'])] }), [400], HYPER),
      v('http-1.2', () => ({ parts: [head('GET /healthz HTTP/1.2', ['Host: storm'])] }), [400], HYPER),
      v('h2-preface', () => ({ parts: [H2_PREFACE] }), [], { ...HYPER, answers: 0 }),
      v('tls-client-hello', () => ({ parts: [TLS_HELLO] }), [400], HYPER),
      v('random-bytes', (c) => ({ parts: [c.randomBytes(64 + c.int(4096)), B('\r\n\r\n')] }), [400, 414, 431], HYPER),
      v('leading-crlf', () => ({ parts: [Buffer.concat([B('\r\n'), HEALTH])] }), [200]),
      v('empty-then-close', () => ({ parts: [], halfClose: true }), [], { answers: 0 }),
    ],
  },
};

/** Picks a kind by weight, then a variant, from `rng` (0 <= rng() < 1). */
export function pick(rng) {
  const kinds = Object.entries(KINDS);
  const total = kinds.reduce((s, [, k]) => s + k.weight, 0);
  let r = rng() * total;
  for (const [name, k] of kinds) {
    r -= k.weight;
    if (r < 0) return { kind: name, variant: k.variants[Math.floor(rng() * k.variants.length)] };
  }
  const [name, k] = kinds[0];
  return { kind: name, variant: k.variants[0] };
}

export { chargeBody, chunked, bodyOfSize };

// Reading answers: short descriptions for the table, body comparison, the replay marker.

/** `201 application/json {"id":"ch_1",…}` or `no answer: …`, at most ~70 characters. */
export function describe(a) {
  if (a.error) return `no answer: ${a.error}`;
  const type = (a.headers['content-type'] ?? 'no content type').split(';')[0];
  const body = a.body.replace(/\s+/g, ' ').trim();
  const snippet = body.length > 48 ? `${body.slice(0, 47)}…` : body;
  return `${a.status} ${type}${snippet ? ` ${snippet}` : ''}`;
}

export const ok = (a) => !a.error && a.status >= 200 && a.status < 300;

/**
 * How two bodies compare: 'bytes' (identical), 'json' (equal as JSON values, member order or
 * spacing aside), or the first difference as `at <path>: <x> vs <y>`.
 */
export function compareBodies(x, y) {
  if (x === y) return { equal: true, how: 'byte for byte' };
  let jx;
  let jy;
  try {
    jx = JSON.parse(x);
    jy = JSON.parse(y);
  } catch {
    return { equal: false, how: 'the bodies differ' };
  }
  const diff = firstDifference(jx, jy, '');
  if (diff === null) return { equal: true, how: 'equal as JSON (not byte for byte)' };
  return { equal: false, how: diff };
}

function firstDifference(x, y, path) {
  if (x !== null && y !== null && typeof x === 'object' && typeof y === 'object'
      && Array.isArray(x) === Array.isArray(y)) {
    const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])];
    for (const k of keys) {
      const d = firstDifference(x[k], y[k], path ? `${path}.${k}` : k);
      if (d !== null) return d;
    }
    return null;
  }
  if (x === y) return null;
  const show = (v) => (v === undefined ? 'absent' : JSON.stringify(v).slice(0, 40));
  return `${path || 'the body'}: ${show(x)} vs ${show(y)}`;
}

// Stripe's and the reference server's name, and the spellings other frameworks use.
const MARKER = /^(x-)?idempot[a-z]*-replay(ed)?$/;

/** The replay marker an answer carries, e.g. `Idempotent-Replayed: true`, or null. */
export function replayMarker(a) {
  if (a.error) return null;
  for (const [name, value] of Object.entries(a.headers)) {
    if (MARKER.test(name)) return { name, value: String(value), on: /^(true|1|yes)$/i.test(String(value).trim()) };
  }
  return null;
}

export const isProblemJson = (a) => /^application\/problem\+json\s*(;|$)/i.test(a.headers['content-type'] ?? '');

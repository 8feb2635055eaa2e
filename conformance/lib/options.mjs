// The command line of idemkey-conformance: every option checked before a request goes out, so a
// typo is a clear error (exit 2) and never a half-run against a shop's server.
import { readFileSync } from 'node:fs';

export const USAGE = `usage: idemkey-conformance <charge-url> [options]

Sends a bounded set of crafted requests, each with fresh keys of its own, to a charge endpoint
and prints, check by check, whether the backend honours an idempotency key the way the idemkey
module relies on. Exits 1 if a check the module depends on fails, 2 on a usage or set-up error.

options:
  -H, --header 'Name: value'   a header every request carries (auth token, cookie); repeatable
  --payload JSON | @FILE       the JSON body of a charge the server accepts
                               (default {"amount":100,"currency":"usd"})
  --other-payload JSON | @FILE a second valid body (default: the payload with its first
                               integer member plus one, or with a member added)
  --method M                   POST (default), PUT, PATCH or DELETE
  --key-header NAME            the key's header (default Idempotency-Key)
  --key-format plain|sf-string send keys bare (default) or quoted as the IETF draft's sf-string
  --ledger URL                 a GET that shows the charges made, to count the work done
  --ledger-count PATH          where the count is in the ledger's JSON: a dotted path to a number
                               or an array (default: "count", else the array, else its one array)
  --scope-header NAME          keys are scoped per customer by this header: the runner sends two
                               fresh customer ids in it
  --other-customer 'Name: value'  headers that make a second customer (e.g. another token);
                               repeatable; with --scope-header or on its own
  --timeout-ms N               give up on an answer after N ms (default 10000)
  --json                       print the results as JSON instead of a table
  --plan                       print what would be sent, send nothing
  -h, --help                   this text`;

/** A usage error: the message says what is wrong and the runner exits 2 without sending. */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** Parse argv (without node and the script) into the options the runner uses. */
export function parseOptions(argv) {
  const o = {
    url: null, headers: [], payload: { amount: 100, currency: 'usd' }, otherPayload: null,
    method: 'POST', keyHeader: 'Idempotency-Key', keyFormat: 'plain', ledger: null,
    ledgerCount: null, scopeHeader: null, otherCustomer: [], timeoutMs: 10000, json: false,
    plan: false, help: false,
  };
  const args = [...argv];
  const value = (flag) => {
    if (args.length === 0) throw new UsageError(`${flag} needs a value`);
    return args.shift();
  };
  while (args.length > 0) {
    const a = args.shift();
    switch (a) {
      case '-h': case '--help': o.help = true; break;
      case '-H': case '--header': o.headers.push(header(value(a), a)); break;
      case '--payload': o.payload = json(value(a), a); break;
      case '--other-payload': o.otherPayload = json(value(a), a); break;
      case '--method': o.method = method(value(a)); break;
      case '--key-header': o.keyHeader = headerName(value(a), a); break;
      case '--key-format': o.keyFormat = keyFormat(value(a)); break;
      case '--ledger': o.ledger = httpUrl(value(a), a); break;
      case '--ledger-count': o.ledgerCount = value(a); break;
      case '--scope-header': o.scopeHeader = headerName(value(a), a); break;
      case '--other-customer': o.otherCustomer.push(header(value(a), a)); break;
      case '--timeout-ms': o.timeoutMs = positiveInt(value(a), a); break;
      case '--json': o.json = true; break;
      case '--plan': o.plan = true; break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option ${a} (see --help)`);
        if (o.url !== null) throw new UsageError(`one charge URL only, got ${o.url} and ${a}`);
        o.url = httpUrl(a, 'the charge URL');
    }
  }
  if (o.help) return o;
  if (o.url === null) throw new UsageError('the charge URL is missing (see --help)');
  if (o.ledgerCount !== null && o.ledger === null) throw new UsageError('--ledger-count needs --ledger');
  if (o.otherPayload === null) o.otherPayload = otherPayload(o.payload);
  if (JSON.stringify(o.otherPayload) === JSON.stringify(o.payload)) {
    throw new UsageError('--other-payload must differ from --payload');
  }
  const reserved = [o.keyHeader, o.scopeHeader, 'content-type', 'content-length', 'host']
    .filter(Boolean).map((n) => n.toLowerCase());
  for (const [name] of o.headers) {
    if (reserved.includes(name.toLowerCase())) {
      throw new UsageError(`-H ${name}: the runner sets this header itself`);
    }
  }
  return o;
}

function header(text, flag) {
  const i = text.indexOf(':');
  if (i <= 0) throw new UsageError(`${flag} takes 'Name: value', got ${JSON.stringify(text)}`);
  const name = headerName(text.slice(0, i).trim(), flag);
  const v = text.slice(i + 1).trim();
  if (/[\0-\x08\x0a-\x1f\x7f]/.test(v)) throw new UsageError(`${flag} ${name}: the value has a control character`);
  return [name, v];
}

function headerName(name, flag) {
  if (!TOKEN.test(name)) throw new UsageError(`${flag}: ${JSON.stringify(name)} is not a header name`);
  return name;
}

function json(text, flag) {
  let source = text;
  if (text.startsWith('@')) {
    try {
      source = readFileSync(text.slice(1), 'utf8');
    } catch (e) {
      throw new UsageError(`${flag} ${text}: cannot read the file (${e.code || e.message})`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (e) {
    throw new UsageError(`${flag} is not JSON: ${e.message}`);
  }
}

function method(m) {
  const up = m.toUpperCase();
  if (!METHODS.includes(up)) throw new UsageError(`--method must be one of ${METHODS.join(', ')}, got ${m}`);
  return up;
}

function keyFormat(f) {
  if (f !== 'plain' && f !== 'sf-string') throw new UsageError(`--key-format must be plain or sf-string, got ${f}`);
  return f;
}

function httpUrl(text, what) {
  let u;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`${what}: ${JSON.stringify(text)} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new UsageError(`${what}: ${text} is not http:// or https://`);
  }
  return u.href;
}

function positiveInt(text, flag) {
  if (!/^[1-9][0-9]{0,6}$/.test(text)) throw new UsageError(`${flag} takes a whole number of ms, got ${text}`);
  return Number(text);
}

/** A second body the server should accept as well: the first integer member plus one, or a member added. */
export function otherPayload(payload) {
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    for (const [k, v] of Object.entries(payload)) {
      if (Number.isSafeInteger(v)) return { ...payload, [k]: v + 1 };
    }
    return { ...payload, conformance_variant: 2 };
  }
  throw new UsageError('--payload is not a JSON object: give --other-payload as well');
}

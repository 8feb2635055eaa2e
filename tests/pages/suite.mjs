// What the suites of tests/pages share: the reference server serving tests/pages/www and
// the module built in pkg/, its API for one customer, and the engines each suite plays in
// side by side, each in one browser session reused from try to try.
// PAGES_BROWSERS=chromium,firefox,webkit (the default) picks the engines, for development only.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe } from 'node:test';
import { ROOT, mustExist, startServer } from '../support/reference.mjs';
import { ENGINES } from './sessions.mjs';

const PKG = path.resolve(ROOT, process.env.IDEMKEY_PKG || 'pkg');
const WWW = path.join(ROOT, 'tests', 'pages', 'www');
const ENGINE_NAMES = (process.env.PAGES_BROWSERS || 'chromium,firefox,webkit').split(',');

/**
 * The reference server of a suite, started before its tests with `args` (more flags) and
 * stopped after them: `server.url` once started, `server.api(method, route, customer, body)`
 * its JSON answer, `server.ledger(customer)` the keys of the customer's charges.
 */
export function pagesServer(args = []) {
  mustExist(path.join(PKG, 'idemkey.js'), 'build the module with `make build`');
  let running = null;
  const server = {
    url: null,
    async api(method, route, customer, body) {
      const res = await fetch(`${server.url}${route}`, {
        method,
        headers: { 'X-Customer-Id': customer, 'content-type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      assert.ok(res.ok, `${method} ${route}: ${res.status}`);
      return res.json();
    },
    async ledger(customer) {
      return (await server.api('GET', '/api/charges', customer)).charges.map((c) => c.key);
    },
  };
  before(async () => {
    running = await startServer(['--static', WWW, '--pkg', PKG, '--provider-latency-ms', '0', ...args]);
    server.url = running.url;
  });
  after(async () => {
    await running?.stop();
  });
  return server;
}

/**
 * One describe() per engine, side by side (one try at a time in each): `body(engine)`
 * declares its tests; `engine.session()` is the engine's browser session, started on
 * first use and kept for the next try, `engine.restart()` closes it (after a try that
 * hung), and it is closed after the engine's tests.
 */
export function eachEngine(body) {
  describe('Chromium, Firefox and WebKit side by side', { concurrency: ENGINE_NAMES.length }, () => {
    for (const name of ENGINE_NAMES) {
      describe(name, { concurrency: 1 }, () => {
        let current = null;
        const engine = {
          name,
          session: async () => (current ||= await ENGINES[name]()),
          async restart() {
            await current?.close();
            current = null;
          },
        };
        before(() => {
          if (!ENGINES[name]) throw new Error(`PAGES_BROWSERS: unknown engine ${name}`);
        });
        after(() => engine.restart());
        body(engine);
      });
    }
  });
}

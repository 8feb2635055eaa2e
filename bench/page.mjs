// The bench page (bench/www/index.html) on a reference server of its own that serves the
// package `pkg` at /pkg/, with no provider latency: what bench/ab.mjs and bench/costs.mjs
// time checkouts in.
import { openSync } from 'node:fs';
import { startServer } from '../tests/support/reference.mjs';

/**
 * Starts the server and opens the page in `browser` once the page says it is ready; page
 * errors are printed, prefixed with `pkg`. Resolves with `{ server, page }`; the caller
 * stops the server.
 */
export async function benchPage(browser, pkg) {
  const server = await startServer(['--static', 'bench/www', '--pkg', pkg, '--provider-latency-ms', '0'],
    { stderr: openSync('/dev/null', 'w') });
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error(`${pkg}: page error: ${e.message}`));
  await page.goto(`${server.url}/index.html`);
  await page.waitForFunction(() => window.benchReady === true);
  return { server, page };
}

/**
 * Readies `page` (a bench page) for the stored-answer case: one succeeded checkout of its
 * own scope, its answer also in the careful page's store; then `window.storedRun(who, n)`
 * makes `n` calls answered from storage, idemkey's `submit()` (`who` "idemkey") or the
 * careful page's Web Lock + IndexedDB read, each checked to be that answer.
 */
export function storedAnswerCase(page) {
  return page.evaluate(async () => {
    const { Checkout } = await import('/pkg/idemkey.js');
    const { carefulCachedRead, storeAnswer } = await import('/handwritten.js');
    const headers = { 'X-Customer-Id': 'bench-client' };
    const payload = { amount: 1999, currency: 'EUR', items: [{ sku: 'mug', qty: 1 }] };
    const scope = `stored-${Math.random()}`;
    const c = Checkout.open({ scope, endpoint: '/api/charges', headers });
    const first = await c.submit(payload);
    await storeAnswer(scope, first);
    window.storedRun = async (who, n) => {
      for (let i = 0; i < n; i++) {
        const r = who === 'idemkey' ? await c.submit(payload) : await carefulCachedRead(scope);
        if (r.key !== first.key || (who === 'idemkey' && !r.fromCache)) throw new Error('not the stored answer');
      }
    };
  });
}

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

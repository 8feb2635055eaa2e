// The chaos run's WebKit tabs (tests/support/wdpage.mjs): a tab that a page opens
// (window.open, the demo's "Open a second tab") reaches the checkout that opened it,
// even when another checkout of the same browser opens a tab of its own meanwhile.
// MiniBrowser answers a driver's request for a new window with its active window when
// that window has one tab and no address yet; a page's new window is such a window
// until its load starts, which a busy page delays here, as a loaded machine does in a
// long run.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { launchWebDriverBrowser } from '../support/wdpage.mjs';

// Opens a window, then keeps its process busy for 3 s: the new window's load waits.
const PAGE = `<!doctype html><title>opener</title>
<button id="open" onclick="window.open(location.origin + '/popup', '_blank');
  setTimeout(() => { const t = Date.now(); while (Date.now() - t < 3000); }, 0);">open</button>`;

const ROUNDS = 3;

test('a window a page opens goes to that page, while another page opens a window too', { timeout: 120000 }, async () => {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(req.url === '/popup' ? '<!doctype html><title>popup</title>' : PAGE);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await launchWebDriverBrowser('webkit');
  try {
    const context = await browser.newContext();
    const opener = await context.newPage();
    await opener.goto(`${base}/`);
    // Whether the popup is already the window in front when the other tab is asked for
    // is up to the browser: a few rounds.
    for (let round = 1; round <= ROUNDS; round += 1) {
      // As checkout.mjs does: wait for the popup, click; and another checkout's new tab.
      const popupOpened = opener.waitForEvent('popup', { timeout: 20000 });
      const clicked = opener.click('#open');
      const other = context.newPage();
      const [popup, , page] = await Promise.all([popupOpened, clicked, other]);

      assert.notEqual(page.handle, popup.handle, `round ${round}: the other page got a window of its own`);
      await popup.waitForLoadState();
      assert.equal(await popup.url(), `${base}/popup`, `round ${round}: the popup loaded what its opener asked for`);
      assert.equal(await popup.evaluate(() => window.opener !== null), true, `round ${round}: the popup knows its opener`);
      assert.equal(await page.evaluate(() => window.opener === null), true, `round ${round}: the other page has no opener`);
      await page.goto(`${base}/?other`);
      assert.equal(await popup.url(), `${base}/popup`, `round ${round}: the other page's navigation left the popup alone`);
      await Promise.all([popup.close(), page.close()]);
    }
  } finally {
    await browser.close();
    server.close();
  }
});

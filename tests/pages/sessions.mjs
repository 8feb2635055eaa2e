// One browser session with two windows, `main` and `other` (a second tab of the shop),
// driven alike in Chromium (playwright-core) and in Firefox and WebKit (W3C WebDriver,
// WebKit's under xvfb-run): load an address in a window, read a value of its page.
import { launchChromium } from '../support/reference.mjs';
import { launch } from '../support/webdriver.mjs';

/** The engines, by the name the tests print, and how each is driven. */
export const ENGINES = { chromium: chromiumSession, firefox: () => webDriverSession('firefox'), webkit: () => webDriverSession('webkit') };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function chromiumSession() {
  const browser = await launchChromium();
  const context = await browser.newContext();
  const pages = { main: await context.newPage() };
  const page = async (win) => (pages[win] ||= await context.newPage());
  return {
    async go(win, url) {
      await (await page(win)).goto(url);
    },
    /** fn(arg) in the window's page; undefined while it is between two documents. */
    async read(win, fn, arg) {
      return (await page(win)).evaluate(fn, arg).catch(() => undefined);
    },
    close: () => browser.close(),
  };
}

async function webDriverSession(name) {
  const b = await launch(name);
  const handles = { main: await b.window() };
  let current = handles.main;
  async function select(win) {
    handles[win] ||= await b.newWindow('window');
    if (handles[win] !== current) {
      await b.switchTo(handles[win]);
      current = handles[win];
    }
  }
  return {
    async go(win, url) {
      await select(win);
      await b.navigate(url);
    },
    async read(win, fn, arg) {
      await select(win);
      return b.execute(fn, ...(arg === undefined ? [] : [arg])).catch(() => undefined);
    },
    close: () => b.quit(),
  };
}

/**
 * Polls fn(arg) in the window until it returns a value other than null or undefined, which
 * it returns; null after `timeout` ms.
 */
export async function poll(session, win, fn, timeout = 20000, arg = undefined) {
  const until = Date.now() + timeout;
  for (;;) {
    const v = await session.read(win, fn, arg);
    if (v !== undefined && v !== null) return v;
    if (Date.now() > until) return null;
    await sleep(25);
  }
}

/** poll(), which must see a value within `timeout` ms. */
export async function waitFor(session, win, fn, { timeout = 20000, what = 'the page' } = {}) {
  const v = await poll(session, win, fn, timeout);
  if (v === null) throw new Error(`${what}: nothing within ${timeout / 1000} s`);
  return v;
}

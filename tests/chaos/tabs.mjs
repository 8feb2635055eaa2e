// Browser tabs for the chaos run: Debian's Chromium, a few contexts (each its own
// profile, its own localStorage), and every tab watched: each outcome the demo shows,
// each charge request it sends, each page error and unexpected console error.
import { launchChromium } from '../support/reference.mjs';

const READY_MS = 30000;

// Failed loads of the checkout's own API calls are the faults and restarts at work;
// Chromium logs them as console errors by itself. So are its favicon loads: the .ico probe
// on the page that puts the order in the cart, and the demo's favicon.svg, which the
// browser fetches on its own schedule, after the page has loaded, so a kill -9 restart
// can fall on it (seen once: ERR_EMPTY_RESPONSE during the second restart). Any other
// console error counts.
const EXPECTED_FAILED_LOAD = /^\/(api\/|favicon\.(ico|svg)$)/;
const FAILED_LOAD = /^Failed to load resource: /;

/** Reports every outcome the demo shows (its #outcome box, data-seq bumped each time). */
function watchOutcomes() {
  document.addEventListener('DOMContentLoaded', () => {
    const box = document.getElementById('outcome');
    if (!box) return;
    new MutationObserver(() => {
      window.__chaosOutcome({ ...box.dataset, title: box.querySelector('.outcome-title')?.textContent || '' });
    }).observe(box, { attributes: true, attributeFilter: ['data-seq'] });
  });
}

/** A tab as the run sees it. */
export class Tab {
  constructor(page, name, sink) {
    this.page = page;
    this.name = name;
    this.sink = sink;          // the checkout's record: { outcomes, posts, errors }
  }

  /** Load url (under the gate, so no restart cuts the page's boot) and wait until the demo is ready. */
  async load(url, gate) {
    await gate.shared(async () => {
      await this.page.goto(url, { timeout: READY_MS });
      await this.ready();
    });
  }

  async reload(gate) {
    await gate.shared(async () => {
      await this.page.reload({ timeout: READY_MS });
      await this.ready();
    });
  }

  async ready() {
    await this.page.waitForSelector('body[data-ready="true"]', { timeout: READY_MS });
  }

  /** A click on a control, from the page itself (a background tab gets Playwright's input late). */
  click(selector) {
    return this.page.evaluate((sel) => document.querySelector(sel).click(), selector);
  }

  /** The outcome box's count, the Pay button's busy flag, the attempt's state and key. */
  status() {
    return this.page.evaluate(() => ({
      seq: Number(document.querySelector('#outcome').dataset.seq),
      busy: document.querySelector('#pay').getAttribute('aria-busy') === 'true',
      state: document.querySelector('#state').dataset.state,
      key: document.querySelector('#key').textContent.trim(),
      cart: document.querySelector('#cart-id').textContent.trim(),
      total: document.querySelector('#total').textContent.trim(),
    }));
  }

  /** Wait until a Pay pressed after outcome number `since` has finished. */
  async settled(since, timeoutMs) {
    await this.page.waitForFunction((n) => Number(document.querySelector('#outcome').dataset.seq) > n
      && document.querySelector('#pay').getAttribute('aria-busy') !== 'true', since, { timeout: timeoutMs, polling: 50 });
  }

  /** The order's total in minor units, as the page will charge it. */
  async amount() {
    const { total } = await this.status();
    return Number(total.replace(/[^0-9]/g, ''));
  }

  close() {
    return this.page.close().catch(() => {});
  }
}

/** Chromium with `contexts` profiles; newTab(i, checkout record, name) opens a watched tab in profile i. */
export async function openBrowser(contexts) {
  const browser = await launchChromium();
  const owners = new Map();    // page -> the checkout record its events go to
  const profiles = [];
  for (let i = 0; i < contexts; i += 1) {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    await context.exposeBinding('__chaosOutcome', ({ page }, data) => {
      const rec = owners.get(page);
      if (rec) rec.sink.outcomes.push({ tab: rec.name, at: Date.now(), ...data });
    });
    await context.addInitScript(watchOutcomes);
    profiles.push(context);
  }

  function watch(page, tab) {
    owners.set(page, tab);
    const { sink } = tab;
    page.on('pageerror', (err) => sink.errors.push(`${tab.name}: page error: ${err.stack || err.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      let where = '';
      try { where = new URL(msg.location()?.url || '').pathname; } catch { /* no location */ }
      if (FAILED_LOAD.test(msg.text()) && EXPECTED_FAILED_LOAD.test(where)) return;
      sink.errors.push(`${tab.name}: console error: ${msg.text()} (${msg.location()?.url || 'no location'})`);
    });
    page.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/charges') {
        sink.posts.push({ tab: tab.name, at: Date.now(), key: req.headers()['idempotency-key'] || null });
        sink.onPost?.();
      }
    });
    page.on('close', () => owners.delete(page));
  }

  return {
    browser,
    /** A new watched tab in profile `i`. */
    async newTab(i, sink, name) {
      const page = await profiles[i].newPage();
      const tab = new Tab(page, name, sink);
      watch(page, tab);
      return tab;
    },
    /** Watch a tab the page opened itself (window.open). */
    adopt(page, sink, name) {
      const tab = new Tab(page, name, sink);
      watch(page, tab);
      return tab;
    },
    close: () => browser.close().catch(() => {}),
  };
}

// Browser tabs for the chaos run in a browser playwright-core cannot drive here (WebKit),
// through WebDriver (tests/support/wdpage.mjs): `contexts` driver sessions, each its own
// browser process and storage. The same Tab as tabs.mjs; what each tab shows, sends and
// throws is watched another way: the outcome box by an observer the page runs and the
// driver collects, the charge requests by a relay in front of the server (tap.mjs; it
// knows a request's customer, so its checkout, not its tab), the page's own errors by
// the page. The pages load from the relay's address, which outlives server restarts.
import { launchWebDriverBrowser } from '../support/wdpage.mjs';
import { startTap } from '../support/tap.mjs';
import { Tab } from './tabs.mjs';

// The outcome box's changes (data-seq bumped each time), as tabs.mjs reports them.
const WATCH_OUTCOMES = `
  const watch = () => {
    const box = document.getElementById('outcome');
    if (!box) return;
    new MutationObserver(() => window.__wdEmit({ ...box.dataset, title: box.querySelector('.outcome-title')?.textContent || '' }))
      .observe(box, { attributes: true, attributeFilter: ['data-seq'] });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', watch); else watch();`;

// WebKit opens no window for a script's click (window.open needs a user gesture there):
// "Open a second tab" is a real click of the driver's; other controls are clicked from the
// page, as tabs.mjs does.
class WebDriverTab extends Tab {
  click(selector) {
    return selector === '#move-tab' ? this.page.click(selector) : super.click(selector);
  }
}

/** WebDriver `name` with `contexts` sessions in front of `target` (the server's base URL). */
export async function openWebDriverBrowser(name, contexts, target) {
  const sinks = new Map();     // customer -> the checkout record its requests go to
  const tap = await startTap(target, (req) => {
    if (req.method !== 'POST' || req.path !== '/api/charges') return;
    const sink = sinks.get(req.customer);
    if (!sink) return;
    sink.posts.push({ tab: 'relay', at: req.at, key: req.key });
    sink.onPost?.();
  });
  const browser = await launchWebDriverBrowser(name);
  const profiles = [];
  for (let i = 0; i < contexts; i += 1) {
    profiles.push(await browser.newContext({ viewport: { width: 1100, height: 900 }, initScript: WATCH_OUTCOMES }));
  }

  function watch(page, tab) {
    const { sink } = tab;
    sinks.set(sink.plan.customer, sink);
    page.errors.push((e) => sink.errors.push(`${tab.name}: ${e}`));
    page.emitted.push((data) => sink.outcomes.push({ tab: tab.name, at: Date.now(), ...data }));
  }

  return {
    /** Where the pages load from: the relay. */
    url: tap.url,
    async newTab(i, sink, tabName) {
      const page = await profiles[i].newPage();
      const tab = new WebDriverTab(page, tabName, sink);
      watch(page, tab);
      return tab;
    },
    adopt(page, sink, tabName) {
      const tab = new WebDriverTab(page, tabName, sink);
      watch(page, tab);
      return tab;
    },
    async close() {
      await browser.close().catch(() => {});
      await tap.close();
    },
  };
}

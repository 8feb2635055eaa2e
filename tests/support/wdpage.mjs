// Pages with the playwright-core calls the end-to-end and chaos suites make, over a W3C
// WebDriver session (webdriver.mjs): so the same scenarios run in WebKit, which
// playwright-core cannot drive here. A context is one driver session (one browser process,
// its own storage); a page is one of its windows. A session does one command at a time
// in its current window, so every call takes the session's turn and selects its window
// first; an evaluate whose function returns a promise leaves it running in the page and
// polls for it, so pages of one context make progress side by side.
//
// What W3C WebDriver cannot give: console messages and network events. Page errors
// (uncaught exceptions, unhandled rejections, console.error calls) are collected by the
// page itself from the first command after each load, and each command hands over what
// was collected; charge requests are seen by a relay in front of the server (tap.mjs).
import { launch } from './webdriver.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const KEYS = { Tab: '\uE004', Enter: '\uE007', Space: ' ', ArrowDown: '\uE015', ArrowUp: '\uE013' };
const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

// Every script starts by installing the page's error collector (once per document) and
// ends by handing over what it collected.
const COLLECT = `
  if (!window.__wdErrors) {
    window.__wdErrors = [];
    const push = (what) => window.__wdErrors.push(what);
    addEventListener('error', (e) => push('page error: ' + (e.error && e.error.stack || e.message)));
    addEventListener('unhandledrejection', (e) => push('unhandled rejection: ' + (e.reason && e.reason.stack || e.reason)));
    const ce = console.error;
    console.error = function (...a) { push('console error: ' + a.map(String).join(' ')); return ce.apply(this, a); };
  }`;

function script(body, init = '') {
  return `${COLLECT}
  if (!window.__wdEvents) { window.__wdEvents = []; window.__wdEmit = (d) => window.__wdEvents.push(d); ${init} }
  const __out = (() => { ${body} })();
  const __errs = window.__wdErrors.splice(0);
  return { v: __out === undefined ? null : __out, errs: __errs, events: window.__wdEvents.splice(0) };`;
}

/** A browser like playwright's: newContext() opens a driver session of `name`. */
export async function launchWebDriverBrowser(name) {
  const contexts = [];
  return {
    name,
    /**
     * initScript: JS run in each document before the first command there (WebDriver has
     * no script that runs at load); it may call window.__wdEmit(data), which each command
     * hands to the page's `emit` listeners.
     */
    async newContext({ viewport, initScript = '' } = {}) {
      const c = await newContext(name, viewport, initScript);
      contexts.push(c);
      return c;
    },
    async close() {
      await Promise.all(contexts.map((c) => c.close()));
    },
  };
}

async function newContext(name, viewport, initScript) {
  const b = await launch(name);
  let turn = Promise.resolve();
  let current = await b.window();
  // The session's first window, never closed: commands that need an open current window
  // (a new window) run from it once a page's window is gone.
  const home = current;
  const pages = [];
  const listeners = { page: [] };
  const known = new Set([current]);
  // Windows pages open themselves (window.open) that are not yet handed out with an
  // address; see openWindow.
  const popups = { opening: 0, idle: [] };

  /** Run fn(b) with the session, in window `handle`, after the calls queued before it. */
  function withWindow(handle, fn) {
    const run = turn.then(async () => {
      if (handle && handle !== current) {
        await b.switchTo(handle);
        current = handle;
      }
      return fn(b);
    });
    turn = run.catch(() => {});
    return run;
  }

  async function setViewport(handle) {
    if (!viewport) return;
    // A resized window may lose the focus, and WebKit matches :focus only in the active
    // window: selected again afterwards.
    await withWindow(handle, async () => {
      await b.command('POST', '/window/rect', { width: viewport.width, height: viewport.height }).catch(() => {});
      await b.switchTo(handle);
    });
  }

  const context = {
    pages: () => pages.filter((p) => !p.isClosed()),
    on(event, f) { (listeners[event] ||= []).push(f); },
    async newPage() {
      // Always a new window: the session's first one stays open behind the pages, as a
      // session ends with its last window.
      const handle = await openWindow();
      known.add(handle);
      const page = makePage(handle);
      await setViewport(handle);
      return page;
    },
    /** 'page': a window the page opened itself (window.open). */
    async waitForEvent(event, { timeout = 30000 } = {}) {
      if (event !== 'page') throw new Error(`waitForEvent(${event}) is not supported on a context`);
      return awaitingWindow(() => waitNewWindow(timeout));
    },
    async close() {
      await b.quit();
    },
  };

  /**
   * A new window of the session's own (POST /window/new), never a page's popup.
   * MiniBrowser answers that command with the view of its active window, instead of a
   * new one, when that window has one tab and no address yet; and a window a page has
   * just opened (window.open) is such a window until its load starts, seconds later on a
   * loaded machine. The popup would be handed out as the new page (and sent to
   * about:blank), and the page that opened it would wait for it in vain. So no new
   * window is asked for while a popup of this session is on its way: checked in the
   * session's turn, as the click that opens a popup is queued after the count goes up.
   */
  async function openWindow() {
    for (;;) {
      if (popups.opening) await new Promise((resolve) => popups.idle.push(resolve));
      const handle = await withWindow(null, () => (popups.opening ? null : b.newWindow('window')));
      if (handle) return handle;
    }
  }

  /**
   * wait() finds a window a page opens; counted from now (before the click that opens
   * it is queued) until it is handed out with an address of its own, or wait() fails.
   */
  async function awaitingWindow(wait) {
    popups.opening += 1;
    try {
      return await wait();
    } finally {
      popups.opening -= 1;
      if (!popups.opening) for (const resolve of popups.idle.splice(0)) resolve();
    }
  }

  /**
   * A window not yet handed out; with `opener`, one whose opener is that window (marked
   * by waitForEvent('popup')). Pages of two checkouts share a session and each waits for
   * its own popup, which a same-origin `window.open` lets name its opener. Handed out
   * once the browser gives it an address (its load has started; see openWindow).
   */
  async function waitNewWindow(timeout, opener = null) {
    const until = Date.now() + timeout;
    for (;;) {
      const handles = await withWindow(null, () => b.windows());
      for (const h of handles.filter((x) => !known.has(x))) {
        const mark = opener && await withWindow(h, () => b.execute(
          'return window.opener && window.opener.__wdWindow || null;')).catch(() => null);
        if ((opener && mark !== opener) || known.has(h)) continue;   // or taken meanwhile
        known.add(h);
        while (!(await withWindow(h, () => b.url()).catch(() => ''))) {
          if (Date.now() > until) throw new Error(`the new window got no address within ${timeout / 1000} s`);
          await sleep(50);
        }
        return makePage(h);
      }
      if (Date.now() > until) throw new Error(`no new window within ${timeout / 1000} s`);
      await sleep(50);
    }
  }

  function makePage(handle) {
    let closed = false;
    const errorSinks = [];
    const emitSinks = [];
    const exec = async (body, args = []) => {
      if (closed) throw new Error('the page is closed');
      const out = await withWindow(handle, () => b.execute(script(body, initScript), ...args));
      for (const e of out.errs) for (const f of errorSinks) f(e);
      for (const e of out.events) for (const f of emitSinks) f(e);
      return out.v;
    };
    const fnCall = (fn, argExpr) => `return (${fn})(${argExpr});`;
    let token = 0;

    const page = {
      handle,
      errors: errorSinks,
      emitted: emitSinks,
      isClosed: () => closed,
      url: () => withWindow(handle, () => b.url()),
      async goto(url) {
        await withWindow(handle, () => b.navigate(url));
      },
      async reload() {
        await withWindow(handle, () => b.command('POST', '/refresh', {}));
      },
      async bringToFront() {
        await withWindow(handle, () => b.switchTo(handle));
      },
      async close() {
        if (closed) return;
        closed = true;
        await withWindow(handle, async () => {
          await b.closeWindow().catch(() => {});
          await b.switchTo(home);
          current = home;
        });
      },
      /** fn(arg) in the page; a promise it returns is awaited in the page, polled from here. */
      async evaluate(fn, arg) {
        const id = `e${++token}`;
        const first = await exec(`
          const r = (${fn})(arguments[0]);
          if (!r || typeof r.then !== 'function') return { done: true, ok: true, value: r };
          const st = window.__wdEval || (window.__wdEval = {});
          st[arguments[1]] = { done: false };
          r.then((value) => { st[arguments[1]] = { done: true, ok: true, value }; },
            (e) => { st[arguments[1]] = { done: true, ok: false, error: String(e) + '\\n' + (e && e.stack || '') }; });
          return { done: false };`, [arg === undefined ? null : arg, id]);
        let res = first;
        while (!res.done) {
          await sleep(20);
          res = await exec(`const st = window.__wdEval || {}; const s = st[arguments[0]];
            if (!s) return { done: true, ok: false, error: 'the page navigated away while evaluating' };
            if (s.done) delete st[arguments[0]];
            return s;`, [id]);
        }
        if (!res.ok) throw new Error(`evaluate in ${b.name}: ${res.error}`);
        return res.value === undefined ? null : res.value;
      },
      async waitForFunction(fn, arg, { timeout = 30000, polling = 50 } = {}) {
        const until = Date.now() + timeout;
        for (;;) {
          const v = await page.evaluate(fn, arg);
          if (v) return v;
          if (Date.now() > until) throw new Error(`waitForFunction timed out after ${timeout} ms: ${String(fn).slice(0, 120)}`);
          await sleep(polling);
        }
      },
      async waitForSelector(sel, { timeout = 30000 } = {}) {
        const until = Date.now() + timeout;
        for (;;) {
          const found = await exec('return !!document.querySelector(arguments[0]);', [sel]).catch(() => false);
          if (found) return;
          if (Date.now() > until) throw new Error(`waitForSelector ${sel}: not there after ${timeout} ms`);
          await sleep(50);
        }
      },
      waitForLoadState: () => page.waitForFunction(() => document.readyState === 'complete'),
      /** 'load': the next document of this window has loaded; 'popup': a window it opened. */
      waitForEvent(event, { timeout = 30000 } = {}) {
        if (event === 'popup') {
          // Marked before the click that opens it (queued first), so the popup can name its opener.
          return awaitingWindow(() => exec('window.__wdWindow = arguments[0];', [handle]).then(() => waitNewWindow(timeout, handle)));
        }
        if (event !== 'load') throw new Error(`waitForEvent(${event}) is not supported on a page`);
        // Marks the document now (queued before any later call), then waits for one without it.
        const marked = exec('window.__wdMark = true;');
        return marked.then(async () => {
          const until = Date.now() + timeout;
          for (;;) {
            const loaded = await exec('return !window.__wdMark && document.readyState === "complete";').catch(() => false);
            if (loaded) return;
            if (Date.now() > until) throw new Error(`no load within ${timeout} ms`);
            await sleep(50);
          }
        });
      },
      getAttribute: (sel, name) => exec('const e = document.querySelector(arguments[0]); if (!e) throw new Error("no " + arguments[0]); return e.getAttribute(arguments[1]);', [sel, name]),
      textContent: (sel) => exec('const e = document.querySelector(arguments[0]); if (!e) throw new Error("no " + arguments[0]); return e.textContent;', [sel]),
      $eval: (sel, fn, arg) => exec(`const e = document.querySelector(arguments[0]); if (!e) throw new Error('no ' + arguments[0]); ${fnCall(fn, 'e, arguments[1]')}`, [sel, arg ?? null]),
      $$eval: (sel, fn, arg) => exec(`${fnCall(fn, '[...document.querySelectorAll(arguments[0])], arguments[1]')}`, [sel, arg ?? null]),
      focus: (sel) => exec('document.querySelector(arguments[0]).focus();', [sel]),
      async click(sel, { clickCount = 1 } = {}) {
        await withWindow(handle, async () => {
          const id = await b.find(sel).catch((err) => { throw new Error(`click ${sel}: ${err.message}`); });
          if (clickCount === 1) return b.command('POST', `/element/${id}/click`, {});
          const taps = [];
          for (let i = 0; i < clickCount; i += 1) taps.push({ type: 'pointerDown', button: 0 }, { type: 'pointerUp', button: 0 });
          await b.command('POST', '/actions', { actions: [{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' },
            actions: [{ type: 'pointerMove', duration: 0, origin: { [ELEMENT]: id }, x: 0, y: 0 }, ...taps] }] });
          return b.command('DELETE', '/actions');
        });
      },
      dblclick: (sel) => page.click(sel, { clickCount: 2 }),
      async check(sel) {
        if (!(await exec('return document.querySelector(arguments[0]).checked;', [sel]))) await page.click(sel);
      },
      /** A real click on the option whose value is `value` (an option's value may be its text). */
      async selectOption(sel, value) {
        const n = await exec('return [...document.querySelector(arguments[0]).options].findIndex((o) => o.value === arguments[1]);', [sel, value]);
        if (n < 0) throw new Error(`selectOption ${sel}: no option ${value}`);
        await page.click(`${sel} option:nth-of-type(${n + 1})`);
      },
      keyboard: {
        async press(key) {
          const k = KEYS[key] ?? key;
          await withWindow(handle, async () => {
            await b.command('POST', '/actions', { actions: [{ type: 'key', id: 'kb', actions: [{ type: 'keyDown', value: k }, { type: 'keyUp', value: k }] }] });
            await b.command('DELETE', '/actions');
          });
        },
      },
      async screenshot({ path } = {}) {
        return withWindow(handle, () => b.screenshot(path));
      },
    };
    pages.push(page);
    for (const f of listeners.page) f(page);
    return page;
  }

  return context;
}

export { ELEMENT };

// A small W3C WebDriver client: plain fetch against a driver's HTTP endpoint, one driver
// process per session. It drives the browsers that playwright-core cannot reach here:
// WebKit (Debian's WebKitWebDriver, which starts WebKitGTK's MiniBrowser, under
// `xvfb-run -a` as WebKitGTK has no headless mode), and Firefox ESR (geckodriver) or
// Chromium (chromedriver) when a test wants one protocol for all three.
//
// API (kept stable: other suites import it):
//   import { launch, BROWSERS } from '../support/webdriver.mjs';
//   const b = await launch('webkit' | 'firefox' | 'chrome', { capabilities, timeouts, log });
//     starts the driver on a free port, opens a session; the driver is killed by quit()
//     and, should the test forget, when node exits.
//   await b.navigate(url)                         load a page (waits for its load event)
//   await b.url() / b.title()                     the current page's address / title
//   await b.execute(fnOrSource, ...args)          run a script synchronously, its return value
//   await b.executeAsync(fnOrSource, ...args)     a script that calls its last argument (done)
//   await b.evaluate(fn, ...args)                 fn may return a promise: its settled value,
//                                                 a rejection is thrown here as an Error
//   await b.waitFor(fn, args = [], { timeout, interval, message })
//                                                 polls evaluate(fn, ...args) until truthy
//   await b.click(css) / b.find(css)              a real WebDriver element click / element id
//   await b.windows() / b.window()                every window handle / the current one
//   await b.newWindow('tab' | 'window')           opens one and returns its handle (no switch)
//   await b.switchTo(handle) / b.closeWindow()    select a window / close the current one
//   await b.screenshot(file?)                     PNG Buffer of the viewport, written if file
//   await b.quit()                                delete the session, always kill the driver
//   b.name, b.sessionId, b.capabilities, b.driverLog()   (the driver's stderr tail)
//   Failures throw WebDriverError with .error (the W3C code, e.g. 'no such element').
//
// Environment: WEBKIT_DRIVER, GECKODRIVER, CHROMEDRIVER, MINIBROWSER, FIREFOX, CHROMIUM
// override the Debian paths below.
import { spawn, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { freePort } from './net.mjs';

const env = process.env;
function which(cmd) {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || cmd;
  } catch {
    return cmd;
  }
}

/** How each browser's driver starts, and the capabilities a session asks for. */
export const BROWSERS = {
  webkit: {
    // A small screen: with no window manager, X gives the keyboard focus to the window
    // under the pointer, which rests at the screen's centre (320, 240). Every window here
    // starts at (0, 0) and is wider and taller than that, so the window in front has the
    // focus, as the browser's own window has for a user (WebKit matches :focus and
    // :focus-visible only in a focused window).
    command: (port) => ['xvfb-run', '-a', '-s', '-screen 0 640x480x24',
      env.WEBKIT_DRIVER || '/usr/bin/WebKitWebDriver', `--port=${port}`],
    capabilities: () => ({
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': {
        binary: env.MINIBROWSER || '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser',
        args: ['--automation'],
      },
    }),
  },
  firefox: {
    command: (port) => [env.GECKODRIVER || which('geckodriver'), '--host', '127.0.0.1', '--port', String(port)],
    capabilities: () => ({
      browserName: 'firefox',
      'moz:firefoxOptions': {
        binary: env.FIREFOX || '/usr/bin/firefox-esr',
        args: ['-headless'],
        prefs: {
          'app.update.enabled': false,
          'browser.shell.checkDefaultBrowser': false,
          'datareporting.policy.dataSubmissionEnabled': false,
          'network.captive-portal-service.enabled': false,
          'toolkit.telemetry.reporting.enabled': false,
        },
      },
    }),
  },
  chrome: {
    command: (port) => [env.CHROMEDRIVER || '/usr/bin/chromedriver', `--port=${port}`],
    capabilities: () => ({
      browserName: 'chrome',
      'goog:chromeOptions': {
        binary: env.CHROMIUM || '/usr/bin/chromium',
        // The machine runs as root with a closed network.
        args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic',
          '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      },
    }),
  },
};

/** An error answered by the driver (or a driver that did not answer). */
export class WebDriverError extends Error {
  constructor(error, message, extra = '') {
    super(`${error}: ${message}${extra}`);
    this.name = 'WebDriverError';
    this.error = error;
  }
}

// Drivers still running; killed when node exits so that no test leaves one behind.
const running = new Set();
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Start a driver process (its own process group) and wait until its /status is ready. */
export async function startDriver(name, { readyMs = 30000 } = {}) {
  const spec = BROWSERS[name];
  if (!spec) throw new Error(`webdriver: unknown browser ${name} (${Object.keys(BROWSERS).join(', ')})`);
  const port = await freePort();
  const [bin, ...args] = spec.command(port);
  const child = spawn(bin, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  let log = '';
  child.stderr.on('data', (d) => { log = (log + d).slice(-8000); });
  let failed = null;
  child.on('error', (err) => { failed = err; });
  child.on('exit', () => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  const driver = {
    name, url, child,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 3000);
      await gone;
      clearTimeout(timer);
      // xvfb-run's Xvfb and the browser's helpers share the group; make sure of them too.
      killGroup(child, 'SIGKILL');
      running.delete(child);
    },
  };
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (failed) throw new Error(`webdriver: ${bin} did not start: ${failed.message}`);
    if (child.exitCode !== null) throw new Error(`webdriver: ${bin} exited (${child.exitCode}): ${log}`);
    try {
      const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) });
      const body = await res.json();
      if (res.ok && body.value?.ready !== false) return driver;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await driver.stop();
      throw new Error(`webdriver: ${bin} not ready on port ${port} within ${readyMs / 1000} s: ${log}`);
    }
    await sleep(100);
  }
}

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

function source(fn) {
  return typeof fn === 'function' ? `return (${fn}).apply(null, arguments);` : fn;
}

/**
 * A session in a fresh driver. options.capabilities are merged over the browser's own
 * (top level, shallow); options.timeouts: { script, pageLoad, implicit } in ms.
 */
export async function launch(name, { capabilities = {}, timeouts = {}, commandMs = 120000 } = {}) {
  const driver = await startDriver(name);
  let sessionId = null;

  async function command(method, path, body) {
    const where = sessionId ? `/session/${sessionId}${path}` : path;
    let res;
    try {
      res = await fetch(driver.url + where, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(commandMs),
      });
    } catch (err) {
      throw new WebDriverError('driver unreachable', `${method} ${where}: ${err.message}`, `\n${driver.log()}`);
    }
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new WebDriverError('bad answer', `${method} ${where} -> ${res.status} ${text.slice(0, 200)}`);
    }
    if (!res.ok) {
      const v = json.value || {};
      throw new WebDriverError(v.error || `http ${res.status}`, `${method} ${where}: ${v.message || text.slice(0, 300)}`);
    }
    return json.value;
  }

  try {
    const caps = { ...BROWSERS[name].capabilities(), ...capabilities };
    const created = await command('POST', '/session', { capabilities: { alwaysMatch: caps } });
    sessionId = created.sessionId;
    await command('POST', '/timeouts', { script: 60000, pageLoad: 60000, implicit: 0, ...timeouts });
    const b = {
      name,
      sessionId,
      capabilities: created.capabilities,
      driverLog: driver.log,
      command,
      navigate: (url) => command('POST', '/url', { url }),
      url: () => command('GET', '/url'),
      title: () => command('GET', '/title'),
      execute: (fn, ...args) => command('POST', '/execute/sync', { script: source(fn), args }),
      executeAsync: (fn, ...args) => command('POST', '/execute/async', { script: source(fn), args }),
      async evaluate(fn, ...args) {
        // Settle inside the page; a rejection comes back as data so that every driver
        // reports it alike (their own texts for a script error differ).
        const out = await command('POST', '/execute/async', {
          script: `const done = arguments[arguments.length - 1];
            const args = Array.prototype.slice.call(arguments, 0, -1);
            Promise.resolve().then(() => (${fn}).apply(null, args)).then(
              (value) => done({ ok: true, value: value === undefined ? null : value }),
              (e) => done({ ok: false, error: String(e) + (e && e.stack ? '\\n' + e.stack : '') }));`,
          args,
        });
        if (!out.ok) throw new Error(`in ${name}: ${out.error}`);
        return out.value;
      },
      async waitFor(fn, args = [], { timeout = 30000, interval = 50, message = 'condition' } = {}) {
        const deadline = Date.now() + timeout;
        for (;;) {
          const value = await b.evaluate(fn, ...args);
          if (value) return value;
          if (Date.now() > deadline) throw new Error(`waitFor: ${message} not met within ${timeout / 1000} s in ${name}`);
          await sleep(interval);
        }
      },
      async find(css) {
        const el = await command('POST', '/element', { using: 'css selector', value: css });
        return el[ELEMENT];
      },
      async click(css) {
        const id = await b.find(css);
        await command('POST', `/element/${id}/click`, {});
      },
      windows: () => command('GET', '/window/handles'),
      window: () => command('GET', '/window'),
      async newWindow(type = 'tab') {
        return (await command('POST', '/window/new', { type })).handle;
      },
      switchTo: (handle) => command('POST', '/window', { handle }),
      closeWindow: () => command('DELETE', '/window'),
      async screenshot(file) {
        const png = Buffer.from(await command('GET', '/screenshot'), 'base64');
        if (file) writeFileSync(file, png);
        return png;
      },
      async quit() {
        try {
          if (sessionId) await command('DELETE', '');
        } catch {
          // the driver is killed below either way
        } finally {
          sessionId = null;
          await driver.stop();
        }
      },
    };
    return b;
  } catch (err) {
    await driver.stop();
    throw err;
  }
}

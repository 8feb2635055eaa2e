// The reference server and Debian's Chromium, started one way for the end-to-end tests
// (tests/e2e), the consumer tests (tests/consumer) and the benchmarks (bench/).
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// The machine's network is closed and it runs as root (webdriver.json carries the same flags).
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
// IDEMKEY_SERVER may point at another build of the server (e.g. a debug one).
export const SERVER = process.env.IDEMKEY_SERVER || path.join(ROOT, 'target', 'release', 'idemkey-server');

export function mustExist(file, hint, mode = constants.R_OK) {
  try {
    accessSync(file, mode);
  } catch {
    throw new Error(`${file} is missing: ${hint}`);
  }
}

/** Headless Chromium driven by playwright-core. */
export async function launchChromium() {
  mustExist(CHROMIUM, 'install Debian\'s chromium (make tools)', constants.X_OK);
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Start idemkey-server on a free port with a fresh database, from ROOT (relative paths in
 * `args`, its other flags, are the repository's); resolves once it prints its address.
 * stderr: 'pipe' keeps its tail for stderr(), or a file descriptor to write it to.
 */
export async function startServer(args = [], { stderr: stderrTo = 'pipe', timeoutMs = 20000 } = {}) {
  const [bin, ...binArgs] = SERVER.split(' ');
  mustExist(bin, 'build it with `make server` (cargo build --release -p idemkey-server)', constants.X_OK);
  const dir = mkdtempSync(path.join(tmpdir(), 'idemkey-server-'));
  const child = spawn(bin, [...binArgs, '--addr', '127.0.0.1:0', '--db', path.join(dir, 'idemkey.db'), ...args],
    { cwd: ROOT, stdio: ['ignore', 'pipe', stderrTo] });
  let stderr = '';
  child.stderr?.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  const server = {
    url: null,
    stderr: () => stderr,
    async stop() {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    server.url = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(
        `idemkey-server printed no address within ${timeoutMs / 1000} s; stderr:\n${stderr}`)), timeoutMs);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) { clearTimeout(timer); resolve(m[1].replace(/\/$/, '')); }
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`idemkey-server exited (${code ?? signal}) before listening; stderr:\n${stderr}`));
      });
      child.on('error', (err) => { clearTimeout(timer); reject(err); });
    });
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

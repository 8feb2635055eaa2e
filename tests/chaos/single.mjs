// The single-server target (see targets.mjs): one idemkey-server on a SQLite file.
// restart() kills it with SIGKILL and brings it back on the same database and the SAME
// port: localStorage belongs to an origin (scheme, host and port), so a server back on
// another port would leave every open page on a dead origin, and every pending key in
// storage where no page of the new origin could reach it.
import { spawn } from 'node:child_process';
import { constants, mkdirSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, SERVER, mustExist } from '../support/reference.mjs';

// A stale key (its request died with the server) may be taken over after this; the
// reaper looks at stale keys this often. Short, so a killed request is recovered by
// the next retry or Pay within seconds.
const LOCK_TIMEOUT_MS = 2000;
const REAPER_MS = 500;
// A receipt event claimed by a worker that died is claimed again after this.
const CLAIM_TIMEOUT_MS = 3000;
const LISTEN_TIMEOUT_MS = 20000;
// A restart that finds the port still taken (the old socket not yet released) tries
// again this many times, 100 ms apart.
const BIND_TRIES = 50;

const children = new Set();
// However the run ends, no server it started outlives it.
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });

/** Spawn the server and resolve with { child, url } once it prints its address. */
function launch(bin, args, logFd) {
  const child = spawn(bin, args, { cwd: ROOT, stdio: ['ignore', 'pipe', logFd] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`idemkey-server printed no address within ${LISTEN_TIMEOUT_MS / 1000} s`));
    }, LISTEN_TIMEOUT_MS);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1].replace(/\/$/, '') }); }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`idemkey-server exited (${code ?? signal}) before listening`), { exitCode: code }));
    });
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
  });
}

function killed(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  return gone;
}

/**
 * One idemkey-server on a real SQLite file in a fresh directory, with the demo, the
 * module and the fault API; its log goes to `logFile`.
 */
export async function singleServer({ pkg, logFile, providerLatencyMs }) {
  const [bin, ...binArgs] = SERVER.split(' ');
  mustExist(bin, 'build it with `make server`', constants.X_OK);
  mustExist(path.join(pkg, 'idemkey.js'), 'build the module with `make build`');
  const dir = mkdtempSync(path.join(tmpdir(), 'idemkey-chaos-'));
  const db = path.join(dir, 'chaos.db');
  mkdirSync(path.dirname(logFile), { recursive: true });
  const logFd = openSync(logFile, 'w');
  const flags = ['--db', db, '--static', 'www', '--pkg', pkg, '--faults',
    '--provider-latency-ms', String(providerLatencyMs),
    '--lock-timeout', `${LOCK_TIMEOUT_MS}ms`, '--reaper-interval', `${REAPER_MS}ms`,
    '--outbox-claim-timeout', `${CLAIM_TIMEOUT_MS}ms`, '--log-level', 'warn'];

  let { child, url } = await launch(bin, [...binArgs, '--addr', '127.0.0.1:0', ...flags], logFd);
  const addr = new URL(url).host;
  let up = Promise.resolve();

  async function restart() {
    let done;
    up = new Promise((resolve) => { done = resolve; });
    try {
      await killed(child);
      for (let i = 1; ; i += 1) {
        try {
          ({ child } = await launch(bin, [...binArgs, '--addr', addr, ...flags], logFd));
          return;
        } catch (err) {
          // "cannot listen" exits with status 1 at once; anything else is a real failure.
          if (err.exitCode !== 1 || i >= BIND_TRIES) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    } finally {
      done();
    }
  }

  return {
    name: 'single',
    url,
    restart,
    /** Resolves when no restart is under way. */
    whenUp: () => up,
    /** Long enough after the last request for the reaper to have finished every stale key. */
    settleMs: Math.max(LOCK_TIMEOUT_MS + 3 * REAPER_MS, CLAIM_TIMEOUT_MS + 1000),
    describe: () => `one idemkey-server at ${url} on SQLite ${db}`,
    async stop() {
      await killed(child);
      closeSync(logFd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

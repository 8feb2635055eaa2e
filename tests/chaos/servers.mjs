// Starting and killing the processes of a target: idemkey-server instances, the
// provider service, nginx. Every process started here is killed when the run's
// process exits, however it exits (short of SIGKILL).
import { spawn } from 'node:child_process';
import { ROOT } from '../support/reference.mjs';

// A stale key (its request died with the server) may be taken over after this; the
// reaper looks at stale keys this often. Short, so a killed request is recovered by
// the next retry or Pay within seconds.
const LOCK_TIMEOUT_MS = 2000;
const REAPER_MS = 500;
// A receipt event claimed by a worker that died is claimed again after this.
const CLAIM_TIMEOUT_MS = 3000;
const LISTEN_TIMEOUT_MS = 20000;
// A restart that finds its port still taken (the old socket not yet released) tries
// again this many times, 100 ms apart.
const BIND_TRIES = 50;

/** After the last request, how long until every instance has finished what killed requests left. */
export const SETTLE_MS = Math.max(LOCK_TIMEOUT_MS + 3 * REAPER_MS, CLAIM_TIMEOUT_MS + 1000);

/** The flags of every instance under test: the demo, the module, the fault API, short recovery times. */
export function serverFlags(pkg, providerLatencyMs) {
  return ['--static', 'www', '--pkg', pkg, '--faults',
    ...(providerLatencyMs === undefined ? [] : ['--provider-latency-ms', String(providerLatencyMs)]),
    '--lock-timeout', `${LOCK_TIMEOUT_MS}ms`, '--reaper-interval', `${REAPER_MS}ms`,
    '--outbox-claim-timeout', `${CLAIM_TIMEOUT_MS}ms`, '--log-level', 'warn'];
}

const children = new Set();
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });

/**
 * Spawn a process with its stderr in logFd; resolve with { child, url } once it prints
 * `listening on URL` (or at once, with `listens: false`).
 */
export function launch(bin, args, logFd, { listens = true } = {}) {
  const child = spawn(bin, args, { cwd: ROOT, stdio: ['ignore', 'pipe', logFd] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!listens) {
    child.stdout.resume();
    return Promise.resolve({ child, url: null });
  }
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${bin} ${args[0]} printed no address within ${LISTEN_TIMEOUT_MS / 1000} s`));
    }, LISTEN_TIMEOUT_MS);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1].replace(/\/$/, '') }); }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${bin} exited (${code ?? signal}) before listening`), { exitCode: code }));
    });
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
  });
}

/** `signal` (SIGKILL unless named), and resolve once the process is gone. */
export function killed(child, signal = 'SIGKILL') {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  return gone;
}

/** Start an instance again on `addr` (its old port), waiting out a port not yet released. */
export async function relaunch(bin, args, addr, logFd) {
  for (let i = 1; ; i += 1) {
    try {
      return await launch(bin, [...args, '--addr', addr], logFd);
    } catch (err) {
      // "cannot listen" exits with status 1 at once; anything else is a real failure.
      if (err.exitCode !== 1 || i >= BIND_TRIES) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Restarts one process at a time, and tells who asks whether one is under way:
 * run(fn) runs the restart fn; whenUp() resolves when none is running.
 */
export function restarter() {
  let up = Promise.resolve();
  return {
    async run(fn) {
      let done;
      up = new Promise((resolve) => { done = resolve; });
      try {
        return await fn();
      } finally {
        done();
      }
    },
    whenUp: () => up,
  };
}

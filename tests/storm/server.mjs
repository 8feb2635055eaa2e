// The real idemkey-server for the storm: its whole stderr in a file (a panic anywhere
// in it fails the run), its pid for /proc (peak RSS, CPU time), and optionally a
// lowered open-file limit (prlimit execs the server, so the pid is the server's).
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, SERVER, mustExist } from '../support/reference.mjs';
import { constants } from 'node:fs';

/**
 * Starts the server; `nofile` lowers RLIMIT_NOFILE (soft and hard) for it; with
 * `databaseUrl` it runs on that PostgreSQL instead of an SQLite file of its own.
 */
export async function startStormServer({ args = [], nofile, databaseUrl } = {}) {
  mustExist(SERVER, 'build it with `make server` (cargo build --release -p idemkey-server)', constants.X_OK);
  const dir = mkdtempSync(path.join(tmpdir(), 'idemkey-storm-'));
  const logFile = path.join(dir, 'server.log');
  const logFd = openSync(logFile, 'w');
  const store = databaseUrl
    ? ['--database-url', databaseUrl, '--provider-db', path.join(dir, 'provider.db')]
    : ['--db', path.join(dir, 'idemkey.db')];
  const serverArgs = ['--addr', '127.0.0.1:0', ...store, ...args];
  const [cmd, argv] = nofile
    ? ['prlimit', [`--nofile=${nofile}:${nofile}`, '--', SERVER, ...serverArgs]]
    : [SERVER, serverArgs];
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', logFd] });
  closeSync(logFd);
  const log = () => readFileSync(logFile, 'utf8');
  const addr = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s; log:\n${log()}`)), 20000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/([\d.]+):(\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ host: m[1], port: Number(m[2]) }); }
    });
    child.on('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`server exited (${code ?? signal}); log:\n${log()}`)); });
  });
  return {
    addr,
    pid: child.pid,
    log,
    alive: () => child.exitCode === null && child.signalCode === null,
    /** Peak resident set size in KiB (VmHWM). */
    peakRssKiB() {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : NaN;
    },
    /** User + system CPU time so far, in clock ticks (1/100 s on Linux). */
    cpuTicks() {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]);
    },
    /** Open file descriptors of the server process. */
    async stop() {
      if (this.alive()) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Lines of `log` that show a panic or an abort. */
export function panics(log) {
  return log.split('\n').filter((l) => /panicked|RUST_BACKTRACE|stack backtrace|fatal runtime error/.test(l));
}

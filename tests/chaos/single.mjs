// The single-server target (see targets.mjs): one idemkey-server on a SQLite file.
// restart() kills it with SIGKILL and brings it back on the same database and the SAME
// port: localStorage belongs to an origin (scheme, host and port), so a server back on
// another port would leave every open page on a dead origin, and every pending key in
// storage where no page of the new origin could reach it.
import { constants, mkdirSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SERVER, mustExist } from '../support/reference.mjs';
import { SETTLE_MS, killed, launch, relaunch, restarter, serverFlags } from './servers.mjs';

/** One idemkey-server on a real SQLite file in a fresh directory; its log goes to `logFile`. */
export async function singleServer({ pkg, logFile, providerLatencyMs }) {
  const [bin, ...binArgs] = SERVER.split(' ');
  mustExist(bin, 'build it with `make server`', constants.X_OK);
  mustExist(path.join(pkg, 'idemkey.js'), 'build the module with `make build`');
  const dir = mkdtempSync(path.join(tmpdir(), 'idemkey-chaos-'));
  const db = path.join(dir, 'chaos.db');
  mkdirSync(path.dirname(logFile), { recursive: true });
  const logFd = openSync(logFile, 'w');
  const args = [...binArgs, '--db', db, ...serverFlags(pkg, providerLatencyMs)];
  let { child, url } = await launch(bin, [...args, '--addr', '127.0.0.1:0'], logFd);
  const addr = new URL(url).host;
  const restarts = restarter();

  return {
    name: 'single',
    url,
    faultUrl: () => url,
    restart: () => restarts.run(async () => {
      await killed(child);
      ({ child } = await relaunch(bin, args, addr, logFd));
    }),
    whenUp: restarts.whenUp,
    settleMs: SETTLE_MS,
    describe: () => `one idemkey-server at ${url} on SQLite ${db}`,
    async stop() {
      await killed(child);
      closeSync(logFd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

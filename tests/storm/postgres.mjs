// A PostgreSQL of the storm's own, in a temp dir: PostgreSQL refuses root, so initdb and
// pg_ctl run as postgres (runuser), on loopback TCP only; stop() always stops it.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mustExist } from '../support/reference.mjs';

const PG_BIN = '/usr/lib/postgresql/15/bin';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

/** Starts it; resolves `{ url, stop }` (`url` names a fresh database `idemkey`). */
export async function startPostgres() {
  mustExist(path.join(PG_BIN, 'pg_ctl'), 'install Debian\'s postgresql (make tools)');
  const dir = mkdtempSync(path.join(tmpdir(), 'idemkey-storm-pg-'));
  chmodSync(dir, 0o711);
  const pg = path.join(dir, 'pg');
  mkdirSync(pg);
  execFileSync('chown', ['postgres', pg]);
  const asPostgres = (bin, args) => execFileSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60000 });
  const stop = () => {
    try { asPostgres('pg_ctl', ['-D', path.join(pg, 'data'), '-m', 'immediate', '-w', 'stop']); } catch { /* not running */ }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    asPostgres('initdb', ['-D', path.join(pg, 'data'), '-A', 'trust', '-U', 'postgres']);
    const port = await freePort();
    asPostgres('pg_ctl', ['-D', path.join(pg, 'data'), '-l', path.join(pg, 'log'),
      '-o', `-k ${pg} -p ${port} -c listen_addresses=127.0.0.1`, '-w', 'start']);
    execFileSync(path.join(PG_BIN, 'psql'), ['-X', '-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres',
      '-d', 'postgres', '-c', 'CREATE DATABASE idemkey'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30000 });
    return { url: `postgres://postgres@127.0.0.1:${port}/idemkey`, stop };
  } catch (e) {
    stop();
    throw e;
  }
}

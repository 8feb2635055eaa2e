// A PostgreSQL of a test's own, in a temp dir: PostgreSQL refuses root, so initdb and pg_ctl
// run as postgres (runuser), on loopback TCP only; stop() always stops it and removes the
// dir. The storm and the chaos run's cluster start theirs here.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './net.mjs';
import { mustExist } from './reference.mjs';

const PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * Starts it, with `maxConnections` (PostgreSQL's default is 100); resolves `{ url, stop }`,
 * `url` naming a fresh database `idemkey`.
 */
export async function startPostgres({ maxConnections = 100 } = {}) {
  mustExist(path.join(PG_BIN, 'pg_ctl'), 'install Debian\'s postgresql (make tools)');
  const dir = mkdtempSync(path.join(tmpdir(), 'idemkey-pg-'));
  chmodSync(dir, 0o711);       // postgres must reach its own directory inside ours
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
      '-o', `-k ${pg} -p ${port} -c listen_addresses=127.0.0.1 -c max_connections=${maxConnections}`, '-w', 'start']);
    execFileSync(path.join(PG_BIN, 'psql'), ['-X', '-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres',
      '-d', 'postgres', '-c', 'CREATE DATABASE idemkey'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30000 });
    return { url: `postgres://postgres@127.0.0.1:${port}/idemkey`, stop };
  } catch (e) {
    stop();
    throw e;
  }
}

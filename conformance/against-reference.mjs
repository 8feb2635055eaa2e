// `make conformance` without URL: the runner against the reference server (the release build,
// a fresh SQLite file, a free port), with its ledger and its customer header, so a fresh
// checkout shows in one command what a passing backend looks like. Extra arguments go to
// the runner. Exits with the runner's code.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer } from '../tests/support/reference.mjs';

const cli = fileURLToPath(new URL('./cli.mjs', import.meta.url));
const server = await startServer(['--provider-latency-ms', '100']);
let code = 2;
try {
  const charges = `${server.url}/api/charges`;
  const runner = spawn(process.execPath, [cli, charges, '--ledger', charges, '--scope-header', 'X-Customer-Id',
    ...process.argv.slice(2)], { stdio: 'inherit' });
  code = await new Promise((resolve) => runner.on('exit', (c, signal) => resolve(c ?? (signal ? 2 : 0))));
} finally {
  await server.stop();
}
process.exitCode = code;

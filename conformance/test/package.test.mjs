// The runner as a package: a bin and Node.js alone, so `npx` runs it with nothing to install.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const DIR = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

test('the package has no dependencies and ships the runner and its library only', async () => {
  const pkg = JSON.parse(readFileSync(`${DIR}/package.json`, 'utf8'));
  assert.equal(pkg.dependencies, undefined);
  assert.equal(pkg.bin['idemkey-conformance'], 'cli.mjs');
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: DIR });
  const files = JSON.parse(stdout)[0].files.map((f) => f.path).sort();
  assert.ok(files.includes('cli.mjs') && files.includes('lib/run.mjs'), files.join(' '));
  assert.deepEqual(files.filter((f) => !f.startsWith('lib/') && f !== 'cli.mjs' && f !== 'package.json'), []);
});

test('npx runs it from a checkout: `npx ./conformance --help`', async () => {
  const { stdout } = await run('npx', ['--yes', './conformance', '--help'], { cwd: `${DIR}/..` });
  assert.match(stdout, /^usage: idemkey-conformance <charge-url> \[options\]/);
});

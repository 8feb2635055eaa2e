// The workspace's host tests, as `cargo test --workspace` runs them, but several test
// binaries at a time: `node scripts/host-tests.mjs [JOBS]` (default 4). Most of the host
// tests' time is waiting (for a server to start, a lock to time out, PostgreSQL's initdb):
// one binary after another, cargo test took 143 s of which 56 s was CPU. Each binary runs
// from its package's directory with CARGO_MANIFEST_DIR set, as cargo runs it (the tests
// read the rest of cargo's variables at build time, with env!), and the doc tests run as
// one more job; each job's output is printed whole when it ends, and the run fails if any
// job did, naming each. Stopped (INT, TERM), it stops the jobs still running and prints
// what each had printed, so a hang shows where it hung.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, relative } from 'node:path';

const jobs = Number(process.argv[2] || 4);
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error(`host-tests: JOBS must be a whole number of at least 1, not ${process.argv[2]}`);
  process.exit(2);
}
const root = process.cwd();

// The test binaries, built by the command that builds them for `cargo test --workspace`.
const build = spawnSync('cargo', ['test', '--workspace', '--no-run', '--message-format=json-render-diagnostics'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 1 << 28,
  encoding: 'utf8',
});
if (build.status !== 0) {
  console.error('host-tests: cargo test --no-run failed');
  process.exit(1);
}
const binaries = build.stdout
  .split('\n')
  .filter((line) => line.startsWith('{'))
  .map((line) => JSON.parse(line))
  .filter((m) => m.reason === 'compiler-artifact' && m.profile.test && m.executable)
  .map((m) => ({
    name: `${relative(root, dirname(m.manifest_path)) || '.'}: ${relative(dirname(m.manifest_path), m.target.src_path)}`,
    command: m.executable,
    args: [],
    cwd: dirname(m.manifest_path),
    env: { ...process.env, CARGO_MANIFEST_DIR: dirname(m.manifest_path) },
  }));
if (binaries.length === 0) {
  console.error('host-tests: cargo built no test binary');
  process.exit(1);
}
const all = [...binaries, { name: 'doc tests', command: 'cargo', args: ['test', '--workspace', '--doc'], cwd: root, env: process.env }];

// The jobs running, with what each has printed so far.
const running = new Map();
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  process.on(signal, () => {
    for (const [job, { child, out }] of running) {
      // The job's process group: the binary and the servers its tests started.
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // gone already
      }
      process.stdout.write(`\n== ${job.name} (stopped while running)\n${Buffer.concat(out).toString()}`);
    }
    process.exit(code);
  });
}

/** Runs one job to its end: its name, exit status, seconds and output (stdout and stderr as they came). */
function run(job) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(job.command, job.args, { cwd: job.cwd, env: job.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    running.set(job, { child, out });
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('error', (e) => out.push(Buffer.from(`${e.message}\n`)));
    child.on('close', (code, signal) => {
      running.delete(job);
      resolve({ job, ok: code === 0, status: signal || code, seconds: (Date.now() - started) / 1000, output: Buffer.concat(out).toString() });
    });
  });
}

const failed = [];
let next = 0;
async function worker() {
  while (next < all.length) {
    const r = await run(all[next++]);
    process.stdout.write(`\n== ${r.job.name} (${r.seconds.toFixed(1)} s)${r.ok ? '' : `: FAILED (${r.status})`}\n${r.output}`);
    if (!r.ok) failed.push(r.job.name);
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, all.length) }, worker));

if (failed.length) {
  console.error(`\nhost-tests: ${failed.length} of ${all.length} failed:\n  ${failed.join('\n  ')}`);
  process.exit(1);
}
console.log(`\nhost-tests: all ${all.length} passed (${binaries.length} test binaries and the doc tests)`);

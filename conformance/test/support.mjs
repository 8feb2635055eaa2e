// Running the runner as a user does (its command line, its exit code) against servers the
// tests start on loopback.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../cli.mjs', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Run idemkey-conformance with `args`; resolves with { code, stdout, stderr }. */
export function runCli(args, { timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the runner took over ${timeoutMs} ms\n${stdout}\n${stderr}`)); }, timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/** The runner's --json results by check id, e.g. { replay: 'pass', ... }. */
export function verdicts(stdout) {
  return Object.fromEntries(JSON.parse(stdout).results.map((r) => [r.id, r.verdict]));
}

/**
 * Start a fixture server (a Node script printing `listening on http://ADDR`) in `cwd`;
 * resolves with { url, stop() }.
 */
export async function startFixture(script, { env = {} } = {}) {
  const child = spawn(process.execPath, [script], { cwd: FIXTURES, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${script} printed no address in 15 s: ${stderr}`)), 15000);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      });
      child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${script} exited (${code}): ${stderr}`)); });
    });
    return { url, stop, stderr: () => stderr };
  } catch (e) {
    await stop();
    throw e;
  }
}

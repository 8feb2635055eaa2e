#!/usr/bin/env node
// idemkey-conformance: does a backend honour the idempotency key the way idemkey relies on?
// Exit 0: every check the module depends on passed; 1: one did not; 2: usage or set-up error.
import { parseOptions, UsageError, USAGE } from './lib/options.mjs';
import { exitCode, plan, runChecks, SetupError } from './lib/run.mjs';
import { summary, table } from './lib/report.mjs';

async function main(argv) {
  let o;
  try {
    o = parseOptions(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`idemkey-conformance: ${e.message}\n`);
    return 2;
  }
  if (o.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // The plan goes to stderr with --json, so that stdout stays one JSON document.
  const say = o.json ? (s) => process.stderr.write(`${s}\n`) : (s) => process.stdout.write(`${s}\n`);
  say(plan(o));
  if (o.plan) return 0;
  say('');
  let run;
  try {
    run = await runChecks(o, { onResult: (r) => say(`  ${r.verdict.padEnd(7)} ${r.id}`) });
  } catch (e) {
    if (!(e instanceof SetupError)) throw e;
    process.stderr.write(`idemkey-conformance: ${e.message}\n`);
    return 2;
  }
  const code = exitCode(run.results);
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ url: o.url, exitCode: code, sent: run.sent, results: run.results }, null, 2)}\n`);
  } else {
    say(`\n${table(run.results)}\n\n${summary(run.results, run.sent)}`);
  }
  return code;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  process.stderr.write(`idemkey-conformance: ${e.stack || e}\n`);
  process.exitCode = 2;
});

// The table the runner prints: Markdown, so that it reads in a terminal and pastes into an
// issue or a pull request as it is.

const cell = (s) => String(s ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** PASS, FAIL, UNKNOWN or NOT RUN, and "(reported)" for the checks that do not set the exit code. */
export function verdictText(r) {
  const v = { pass: 'PASS', fail: 'FAIL', unknown: 'UNKNOWN', 'not run': 'NOT RUN' }[r.verdict];
  return `${v}${r.inferred ? ' (inferred)' : ''}${r.fatal ? '' : ' (reported)'}`;
}

export function table(results) {
  const rows = [
    '| check | result | sent | got | why it matters to idemkey |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const r of results) {
    const got = r.note ? `${r.got ? `${r.got}. ` : ''}**${r.note}**` : r.got;
    rows.push(`| ${cell(r.title)} | ${verdictText(r)} | ${cell(r.sent)} | ${cell(got)} | ${cell(r.why)} |`);
  }
  return rows.join('\n');
}

/** The closing lines: what failed, by name, and whether the module can rely on this backend. */
export function summary(results, sent) {
  const fatal = results.filter((r) => r.fatal && r.verdict !== 'not run');
  const bad = fatal.filter((r) => r.verdict !== 'pass');
  const reported = results.filter((r) => !r.fatal && r.verdict === 'fail');
  const notRun = results.filter((r) => r.verdict === 'not run');
  const lines = [`${sent} requests sent.`];
  if (bad.length === 0) {
    lines.push(`All ${fatal.length} checks idemkey depends on passed.`);
  } else {
    lines.push(`${bad.length} of ${fatal.length} checks idemkey depends on did not pass:`);
    for (const r of bad) lines.push(`  - ${r.id} (${r.verdict}): ${r.note}`);
  }
  for (const r of reported) lines.push(`Reported, not fatal: ${r.id}: ${r.note}`);
  for (const r of notRun) lines.push(`Not run: ${r.id}: ${r.note}`);
  return lines.join('\n');
}

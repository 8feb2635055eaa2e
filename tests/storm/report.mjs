// The storm's findings and its tables: answers by status class per kind, then every
// failure grouped by what went wrong and where, with a few examples each.

export class Failures {
  constructor() {
    this.by = new Map(); // "what\0where" -> { what, where, n, examples }
  }

  add(what, where, example) {
    const id = `${what}\0${where}`;
    const f = this.by.get(id) ?? { what, where, n: 0, examples: [] };
    f.n++;
    if (f.examples.length < 3) f.examples.push(String(example).slice(0, 300));
    this.by.set(id, f);
  }

  size() {
    return this.by.size;
  }
}

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};

export function printTables({ counts, failures, requests, seed, stormMs, latencies, peakRssKiB, held, fd, charges, clientLagMs, probeMaxMs, probes }) {
  const cols = ['2xx', '3xx', '4xx', '5xx', 'none'];
  const out = [];
  out.push(`storm: ${requests} requests, seed ${seed}, ${(stormMs / 1000).toFixed(1)} s`);
  out.push(`${pad('kind', 12)}${cols.map((c) => lpad(c, 7)).join('')}`);
  const total = Object.fromEntries(cols.map((c) => [c, 0]));
  for (const [kind, row] of Object.entries(counts).sort()) {
    out.push(`${pad(kind, 12)}${cols.map((c) => lpad(row[c], 7)).join('')}`);
    for (const c of cols) total[c] += row[c];
  }
  out.push(`${pad('total', 12)}${cols.map((c) => lpad(total[c], 7)).join('')}`);
  out.push(`valid requests (charges, replays, health checks, probes): p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms, max ${Math.max(0, ...latencies).toFixed(0)} ms (${latencies.length})`);
  out.push(`health probes behind the slowloris connections: ${probes}, slowest ${probeMaxMs.toFixed(0)} ms; `
    + `the storm's own event loop ran up to ${clientLagMs.toFixed(0)} ms late`);
  out.push(`charges: ${charges.charged} charged, ${charges.replays} replays, ${charges.refusedOrUnanswered} refused or unanswered`);
  out.push(`peak RSS (VmHWM): ${(peakRssKiB / 1024).toFixed(1)} MiB`);
  const ends = {};
  for (const e of held.ended) {
    const k = `${e.kind} -> ${e.status ?? 'closed'}`;
    ends[k] ??= [];
    ends[k].push(e.ms);
  }
  out.push(`slowloris: ${held.ended.length} ended by the server, ${held.open.length} open at the end`);
  for (const [k, ms] of Object.entries(ends).sort()) {
    out.push(`  ${pad(k, 28)} ${lpad(ms.length, 5)}  after ${(Math.min(...ms) / 1000).toFixed(1)}-${(Math.max(...ms) / 1000).toFixed(1)} s`);
  }
  for (const f of fd ?? []) {
    out.push(`${f.label}: ${f.nofile} files, ${f.stalled} stalled bodies; valid charge -> ${f.validStatus ?? 'no answer'} after ${f.validMs} ms; `
      + `${f.closedByServer} stalled closed by the server (${f.answered408} with 408); ${f.acceptFailures} accept-failure warnings; `
      + `CPU ${f.cpuSeconds.toFixed(2)} s in ${f.wallSeconds.toFixed(1)} s; peak RSS ${(f.peakRssKiB / 1024).toFixed(1)} MiB`);
  }
  if (failures.size()) {
    out.push('', `FAILED: ${failures.size()} kinds of failure`);
    for (const f of [...failures.by.values()].sort((a, b) => a.what.localeCompare(b.what) || a.where.localeCompare(b.where))) {
      out.push(`  ${lpad(f.n, 5)}  ${f.what}: ${f.where}`);
      for (const e of f.examples) out.push(`         e.g. ${e.replace(/\s+/g, ' ')}`);
    }
  } else {
    out.push('', 'storm passed: no 5xx, no panic, every valid charge once, no starving connection kept');
  }
  console.log(out.join('\n'));
}

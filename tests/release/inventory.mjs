// The inventory of what the module touches, read from docs/payment-pages.md's table ("What the
// module touches": kind, name, when), and what a run observed compared with it.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "../support/reference.mjs";

export const DOC = path.join(ROOT, "docs/payment-pages.md");

/** The table's rows: { kind, name, when, optional, line }, `name` as the docs print it. */
export function inventory(text = readFileSync(DOC, "utf8")) {
  const section = /^## What the module touches\n([\s\S]*?)(?=^## )/m.exec(text)?.[1];
  if (!section) throw new Error(`${DOC} has no "What the module touches" section`);
  const rows = section.split("\n").filter((l) => /^\| (?!kind |---)/.test(l)).map((line) => {
    const [kind, name, when] = line.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, "").trim());
    return { kind, name: [...name.matchAll(/`([^`]+)`/g)].map((m) => m[1]).join(" "), when, optional: /^only /.test(when), line };
  });
  if (rows.length === 0) throw new Error(`${DOC}: the inventory table has no rows`);
  return rows;
}

/** A row's name as a RegExp, its placeholders filled in (`<ms>`: any number, `<key>`: any key). */
export function pattern(row, fill) {
  const escaped = row.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const filled = escaped.replace(/<(\w+)>/g, (m, p) => (p === "ms" ? "\\d+" : p === "key" ? "[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}" : fill[p]?.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") ?? m));
  return new RegExp(`^${filled}$`);
}

/**
 * Compares `observed` ([kind, name] pairs) with the rows: what was observed and no row names,
 * and the rows (but those that say "only") nothing observed matched.
 */
export function compare(rows, observed, fill) {
  const matchers = rows.map((row) => ({ row, re: pattern(row, fill) }));
  const matched = new Set();
  const undocumented = [];
  for (const [kind, name] of observed) {
    const hit = matchers.filter((m) => m.row.kind === kind && m.re.test(name));
    if (hit.length === 0) undocumented.push(`${kind} ${name}`);
    for (const m of hit) matched.add(m.row);
  }
  const unseen = rows.filter((r) => !r.optional && !matched.has(r)).map((r) => `${r.kind} ${r.name}`);
  return { undocumented: [...new Set(undocumented)], unseen };
}

// The README cannot rot: every code block is a region of a file that the consumer tests
// run or type-check, byte for byte; the top block's commands are Makefile targets; the
// option, event and error tables name exactly what pkg/idemkey.d.ts declares; relative
// links point at files that exist.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { README, blocks, region } from "./docs.mjs";
import { EXAMPLES, ROOT } from "./lib.mjs";

const readme = readFileSync(README, "utf8");
const all = blocks(readme);
const firstSection = readme.indexOf("\n## ");
const top = all.filter((b) => readme.split("\n").slice(0, b.line).join("\n").length < firstSection);
const rest = all.filter((b) => !top.includes(b));
const exercised = new Set(Object.values(EXAMPLES).flat());

test("the README starts with the title and the make demo / make test block", () => {
  assert.match(readme, /^# idemkey\n/);
  assert.equal(top.length, 1, "one code block before the first section");
  const cmds = top[0].body.split("\n").map((l) => l.match(/^make (\S+)/)?.[1]);
  assert.deepEqual(cmds, ["demo", "test"]);
  const makefile = readFileSync(join(ROOT, "Makefile"), "utf8");
  for (const t of cmds) assert.match(makefile, new RegExp(`^${t}:`, "m"), `Makefile target ${t}`);
});

test("every other code block equals the marked region of a tested file", () => {
  assert.ok(rest.length >= 10, `${rest.length} blocks`);
  for (const b of rest) {
    assert.ok(b.marker, `README.md:${b.line}: a code block without <!-- snippet: file#region -->`);
    assert.ok(exercised.has(b.marker.file),
      `README.md:${b.line}: ${b.marker.file} is not run or type-checked by the consumer tests (lib.mjs EXAMPLES)`);
    assert.equal(b.body, region(b.marker.file, b.marker.region),
      `README.md:${b.line} differs from ${b.marker.file}#${b.marker.region ?? ""} (node tests/consumer/docs.mjs --write)`);
  }
});

test("every file under examples/ is used by a consumer test", () => {
  // Not what git ignores there: the frameworks' install and the apps' builds.
  const ignored = new Set(["node_modules", ".build"]);
  const walk = (d) => readdirSync(d).filter((f) => !ignored.has(f)).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? walk(p) : [relative(ROOT, p)];
  });
  const orphans = walk(join(ROOT, "examples")).filter((f) => !exercised.has(f));
  assert.deepEqual(orphans, []);
});

test("relative links point at files that exist", () => {
  const links = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
  assert.ok(links.length > 0);
  for (const l of links) assert.ok(existsSync(join(ROOT, l)), `README link ${l}`);
});

// The tables against the declarations the package ships.
// pkg/ is built before the consumer tests run (make build); read lazily so that the other
// checks still report when it is not.
const dtsFile = process.env.IDEMKEY_DTS ?? join(ROOT, "pkg/idemkey.d.ts");
const declarations = () => readFileSync(dtsFile, "utf8");
function tableColumn(heading) {
  const section = readme.split(/^## /m).find((s) => s.startsWith(heading));
  assert.ok(section, `README section ${heading}`);
  // The body rows of the section's first table (after its `| --- |` line).
  const lines = section.split("\n");
  const sep = lines.findIndex((l) => /^\| -+ \|/.test(l));
  assert.ok(sep > 0, `a table in README section ${heading}`);
  const rows = [];
  for (const l of lines.slice(sep + 1)) { if (!l.startsWith("|")) break; rows.push(l); }
  return rows.map((l) => l.match(/^\| `([^`]+)`/)?.[1] ?? l);
}

test("the option table lists exactly the fields of CheckoutOptions", () => {
  const dts = declarations();
  const body = dts.match(/export interface CheckoutOptions \{([\s\S]*?)\n\}/)?.[1];
  assert.ok(body, "CheckoutOptions in pkg/idemkey.d.ts");
  const declared = [...body.matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]);
  assert.deepEqual(tableColumn("Options").sort(), declared.sort());
});

test("the event and error tables list exactly IdemEvent's types and IdemErrorCode", () => {
  const dts = declarations();
  const events = dts.match(/export type IdemEvent =([\s\S]*?);\n(?!\s*\|)/)?.[1] ?? "";
  const types = [...events.matchAll(/type: "([\w-]+)"/g)].map((m) => m[1]);
  assert.ok(types.length >= 6, "IdemEvent in pkg/idemkey.d.ts");
  const section = tableColumn("The checkout, the result, the events");
  assert.deepEqual(section.sort(), types.sort());
  const codes = dts.match(/export type IdemErrorCode =([^;]*);/)?.[1] ?? "";
  const declared = [...codes.matchAll(/"([\w-]+)"/g)].map((m) => m[1]);
  assert.ok(declared.length >= 3, "IdemErrorCode in pkg/idemkey.d.ts");
  assert.deepEqual(tableColumn("Errors").sort(), declared.sort());
});

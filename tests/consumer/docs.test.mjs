// The module's documents cannot rot: every code block of README.md and of the guide, tabs
// and storage, payment pages, backend and inside documents is a region of a file that the
// consumer tests run or type-check, byte for byte (the Mermaid diagrams aside); the
// README's top block's commands are Makefile targets and the README stays short; each of
// those documents says whom it is for; the guide's option, event and error tables
// name exactly what pkg/idemkey.d.ts declares, and every public name there has a doc
// comment. Relative links: scripts/links.mjs, in `make test-promises`.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { test } from "node:test";
import { DOCUMENTS, README, blocks, region } from "./docs.mjs";
import { EXAMPLES, ROOT } from "./lib.mjs";

const readme = readFileSync(README, "utf8");
const firstSection = readme.indexOf("\n## ");
const top = blocks(readme).filter((b) => readme.split("\n").slice(0, b.line).join("\n").length < firstSection);
const exercised = new Set(Object.values(EXAMPLES).flat());
const GUIDE = join(ROOT, "docs/guide.md");
const guide = readFileSync(GUIDE, "utf8");

test("the README starts with the title and the make demo / make test block", () => {
  assert.match(readme, /^# idemkey\n/);
  assert.equal(top.length, 1, "one code block before the first section");
  const cmds = top[0].body.split("\n").map((l) => l.match(/^make (\S+)/)?.[1]);
  assert.deepEqual(cmds, ["demo", "test"]);
  const makefile = readFileSync(join(ROOT, "Makefile"), "utf8");
  for (const t of cmds) assert.match(makefile, new RegExp(`^${t}:`, "m"), `Makefile target ${t}`);
});

test("the README is read in five minutes: at most 300 lines", () => {
  const lines = readme.replace(/\n$/, "").split("\n").length;
  assert.ok(lines <= 300, `README.md has ${lines} lines`);
});

test("each of the module's documents under docs/ opens by saying whom it is for", () => {
  const docs = DOCUMENTS.filter((f) => f !== README);
  assert.ok(docs.length >= 5, `${docs.length} documents under docs/`);
  for (const file of docs) {
    const [title, , first] = readFileSync(file, "utf8").split("\n");
    assert.match(title, /^# \S/, `${basename(file)}: a title first`);
    assert.match(first, /^For /, `${basename(file)}: the paragraph after the title starts "For ..."`);
  }
});

test("every other code block equals the marked region of a tested file", () => {
  let n = 0;
  for (const file of DOCUMENTS) {
    const name = relative(ROOT, file);
    for (const b of blocks(readFileSync(file, "utf8"), name)) {
      if (file === README && top.some((t) => t.line === b.line)) continue;
      if (b.lang === "mermaid") continue; // a diagram, not code to run
      n++;
      assert.ok(b.marker, `${name}:${b.line}: a code block without <!-- snippet: file#region -->`);
      assert.ok(exercised.has(b.marker.file),
        `${name}:${b.line}: ${b.marker.file} is not run or type-checked by the consumer tests (lib.mjs EXAMPLES)`);
      assert.equal(b.body, region(b.marker.file, b.marker.region),
        `${name}:${b.line} differs from ${b.marker.file}#${b.marker.region ?? ""} (node tests/consumer/docs.mjs --write)`);
    }
  }
  assert.ok(n >= 10, `${n} blocks`);
});

test("the README's quick start is the page the consumer tests build", () => {
  const quick = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? "";
  const [block] = blocks(quick);
  assert.deepEqual(block?.marker, { file: "examples/checkout/checkout.js", region: "quick-start" });
  assert.ok(EXAMPLES.bundled.includes(block.marker.file) && EXAMPLES.unbundled.includes(block.marker.file));
});

test("tabs and storage draws a refresh mid-request, two tabs paying at once, finish() on the receipt route", () => {
  const text = readFileSync(join(ROOT, "docs/tabs-and-storage.md"), "utf8");
  for (const heading of ["A refresh mid-request", "Two tabs paying at once", "`finish()` on the receipt route"]) {
    const section = text.split(new RegExp(`^## ${heading.replace(/[()]/g, "\\$&")}$`, "m"))[1]?.split(/^## /m)[0];
    assert.ok(section, `docs/tabs-and-storage.md: ## ${heading}`);
    assert.match(section, /^```mermaid\nsequenceDiagram\n/m, `a sequence diagram under ## ${heading}`);
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

// The tables against the declarations the package ships.
// pkg/ is built before the consumer tests run (make build); read lazily so that the other
// checks still report when it is not.
const dtsFile = process.env.IDEMKEY_DTS ?? join(ROOT, "pkg/idemkey.d.ts");
const declarations = () => readFileSync(dtsFile, "utf8");
function tableColumn(heading) {
  const section = guide.split(/^## /m).find((s) => s.startsWith(heading));
  assert.ok(section, `docs/guide.md section ${heading}`);
  // The body rows of the section's first table (after its `| --- |` line).
  const lines = section.split("\n");
  const sep = lines.findIndex((l) => /^\| -+ \|/.test(l));
  assert.ok(sep > 0, `a table in docs/guide.md section ${heading}`);
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

test("every public name in idemkey.d.ts has a doc comment, so an editor's hover answers", () => {
  const lines = declarations().split("\n");
  const documented = (i) => {
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === "") j--;
    return j >= 0 && lines[j].trim().endsWith("*/");
  };
  const missing = [];
  let block = null; // the class or interface being read, and whether its members are public
  lines.forEach((line, i) => {
    const top = line.match(/^export (?:declare )?(?:default )?(type|interface|class|function|const) (\w+)/);
    if (top) {
      if (!documented(i)) missing.push(`${top[1]} ${top[2]}`);
      // InitOutput lists the wasm's raw exports, which are not for the page.
      if (/\{\s*$/.test(line) && top[1] !== "type") block = top[2] === "InitOutput" ? null : top[2];
      return;
    }
    if (/^\}/.test(line)) { block = null; return; }
    const member = block && line.match(/^\s+(?:static |readonly )*(\w+|\[Symbol\.dispose\])\??[(:]/);
    if (member && !documented(i)) missing.push(`${block}.${member[1]}`);
  });
  assert.ok(lines.some((l) => /^export class Checkout/.test(l)), "class Checkout in pkg/idemkey.d.ts");
  assert.deepEqual(missing, []);
});

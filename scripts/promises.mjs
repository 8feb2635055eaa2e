// The documents' promises about the client, traced to browser tests. A sentence a user
// relies on, in README.md or docs/*.md, is followed in the Markdown source by its id in an
// HTML comment, `<!-- P-some-name -->`, which renders as nothing; a browser test
// (tests/web/*.rs, or a node test under tests/e2e/, tests/consumer/, tests/csp/ or
// tests/pages/) that checks it has, in the comment lines directly above it,
// `// P-some-name: the sentence in short` (one line per id).
// Fails, listing what is wrong, when an id of the documents has no test naming it, when a
// test names an id no document has, when such a comment stands above no test, when an id
// would show when rendered (`[P-...]` anywhere, or an id comment inside a code block), when
// a test's line speaks of a refresh, a reload, a later page or another tab and the test
// never leaves its page, or when a promise whose sentence does is named by no test that
// leaves its page (scripts/leaves-page.mjs says what leaving is).
// `node scripts/promises.mjs --list` prints each id with the tests that name it.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { block, helpers, language, leavesPage, speaksOfOtherPage, supportFiles } from "./leaves-page.mjs";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const ID = "P-[a-z0-9]+(?:-[a-z0-9]+)*";
// `<!-- P-some-name -->`, one id per comment.
const DOC_ID = new RegExp(`<!-- (${ID}) -->`, "g");
// Anything that starts like an id in a comment, to catch misspelt ones (`<!-- P-Foo -->`,
// `<!--P-a-->`, two ids in one comment).
const DOC_LOOSE = /<!--\s*P-.*?-->/g;
// The old inline form, which would render: `[P-some-name]`.
const DOC_SHOWN = /\[P-[^\]\s]*\]?/g;
// `// P-some-name: what it checks`
const TEST_ID = new RegExp(`^\\s*//\\s*(${ID}):\\s*\\S`);
// A comment line that starts like an id but is not one in that form.
const TEST_LOOSE = /^\s*\/\/\s*P-\S/;

/** README.md and the Markdown files under docs/. */
function documents() {
  const docs = join(ROOT, "docs");
  const inDocs = existsSync(docs)
    ? readdirSync(docs).filter((f) => f.endsWith(".md")).sort().map((f) => join(docs, f))
    : [];
  return [join(ROOT, "README.md"), ...inDocs];
}

/**
 * The ids the documents mark, each with the `file:line`s it is marked on; `sentences`: id ->
 * the text each mark closes (from its paragraph's, table cell's or previous mark's end).
 */
function documentIds(problems, sentences) {
  const ids = new Map();
  for (const file of documents()) {
    const rel = relative(ROOT, file);
    const text = readFileSync(file, "utf8");
    for (const para of text.split(/\n\s*\n|\|/)) {
      let from = 0;
      for (const m of para.matchAll(DOC_ID)) {
        sentences.set(m[1], `${sentences.get(m[1]) || ""} ${para.slice(from, m.index)}`);
        from = m.index + m[0].length;
      }
    }
    let fenced = false;
    text.split("\n").forEach((raw, i) => {
      const at = `${rel}:${i + 1}`;
      if (/^\s*```/.test(raw)) fenced = !fenced;
      // Inline code shows its text as written: an id there is an example, not a mark.
      const line = raw.replace(/`[^`]*`/g, "");
      for (const m of line.matchAll(DOC_SHOWN)) {
        problems.push(`${at}: ${m[0]} would show when rendered: write <!-- ${m[0].replace(/[[\]]/g, "")} --> after the sentence`);
      }
      for (const m of line.matchAll(DOC_LOOSE)) {
        if (!new RegExp(`^<!-- ${ID} -->$`).test(m[0])) {
          problems.push(`${at}: ${m[0]} is not an id of the form <!-- P-lowercase-words --> (one per comment)`);
        }
      }
      for (const m of line.matchAll(DOC_ID)) {
        if (fenced) {
          problems.push(`${at}: ${m[1]} is inside a code block, where it would show: put it after the block`);
          continue;
        }
        if (!ids.has(m[1])) ids.set(m[1], []);
        ids.get(m[1]).push(at);
      }
    });
  }
  return ids;
}

/** The browser test files: tests/web/*.rs and the node tests under tests/e2e, tests/consumer, tests/csp and tests/pages. */
function testFiles() {
  const walk = (dir) =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      if (f === "node_modules") return [];
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
  const web = readdirSync(join(ROOT, "tests", "web"))
    .filter((f) => /\.rs$/.test(f))
    .map((f) => join(ROOT, "tests", "web", f));
  const node = ["e2e", "consumer", "csp", "pages"].flatMap((d) => walk(join(ROOT, "tests", d))).filter((f) => /\.m?js$/.test(f));
  return [...web, ...node].sort();
}

/** The name of the test that starts at `lines[i]`, or null when no test starts there. */
function testAt(lines, i) {
  if (/^\s*#\[wasm_bindgen_test\]/.test(lines[i] ?? "")) {
    for (let j = i + 1; j < Math.min(lines.length, i + 4); j++) {
      const m = lines[j].match(/^\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)/);
      if (m) return m[1];
    }
    return null;
  }
  const m = (lines[i] ?? "").match(/^\s*(?:test|it)\(\s*(["'`])((?:\\.|(?!\1).)*)\1/);
  return m ? m[2].replace(/\\(.)/g, "$1") : null;
}

/** Every id a test names: id -> [`file: test`]; `named` gets { id, file, name, body } of each. */
function testIds(problems, named) {
  const ids = new Map();
  for (const file of testFiles()) {
    const rel = relative(ROOT, file);
    const lines = readFileSync(file, "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!TEST_LOOSE.test(lines[i])) continue;
      // A block of id lines, then the test they stand above.
      const block_ = [];
      let j = i;
      for (; j < lines.length && TEST_LOOSE.test(lines[j]); j++) {
        const m = lines[j].match(TEST_ID);
        if (m) block_.push([m[1], lines[j]]);
        else problems.push(`${rel}:${j + 1}: write \`// P-some-name: what it checks\` (lowercase words, a colon, a text)`);
      }
      const name = testAt(lines, j);
      if (name === null) {
        if (block_.length) problems.push(`${rel}:${i + 1}: ${block_.map(([id]) => id).join(", ")} stands above no test (the next line must start one)`);
      } else {
        const body = file.endsWith(".rs") ? block(lines, j) : block(lines, j, "(");
        for (const [id, claim] of block_) {
          if (!ids.has(id)) ids.set(id, []);
          ids.get(id).push(`${rel}: ${name}`);
          named.push({ id, claim, file, rel, name, body });
        }
      }
      i = j;
    }
  }
  return ids;
}

const problems = [];
const sentences = new Map();
const named = [];
const promised = documentIds(problems, sentences);
const tested = testIds(problems, named);
const defs = helpers([...testFiles(), ...supportFiles(ROOT)]);
// A test that says it checks what another page sees must load one; and a promise about
// other pages must be shown by at least one test that does.
const shown = new Set();
for (const { id, claim, file, rel, name, body } of named) {
  const leaves = leavesPage(body, language(file), defs);
  if (leaves) shown.add(id);
  if (speaksOfOtherPage(claim) && !leaves) {
    problems.push(`${rel}: ${name}: its ${id} line speaks of a refresh, a reload, a later page or another tab, ` +
      "but the test never leaves its page (no reload, navigation, new window or frame): load a new page");
  }
}
for (const id of promised.keys()) {
  if (speaksOfOtherPage(sentences.get(id) || "") && tested.has(id) && !shown.has(id)) {
    problems.push(`${id}: its sentence speaks of a refresh, a reload, a later page or another tab, and no test ` +
      "naming it leaves its page: load a new page in one, or stop claiming it");
  }
}
for (const [id, places] of promised) {
  if (!tested.has(id)) problems.push(`${id} (${places.join(", ")}) has no test: name it in a comment above a browser test`);
}
for (const [id, tests] of tested) {
  if (!promised.has(id)) problems.push(`${id} is named by ${tests.join("; ")} but no document has <!-- ${id} -->`);
}
if (process.argv.includes("--list")) {
  for (const id of [...promised.keys()].sort()) {
    console.log(`${id}\n${(tested.get(id) ?? ["(no test)"]).map((t) => `  ${t}`).join("\n")}`);
  }
}
if (problems.length) {
  console.error(`promises: ${problems.length} problem(s):`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
if (promised.size === 0) {
  console.error("promises: README.md and docs/ mark no promise (<!-- P-some-name -->)");
  process.exit(1);
}
console.log(`promises: ${promised.size} in README.md and docs/, each with a test`);

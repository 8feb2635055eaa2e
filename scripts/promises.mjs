// The README's promises about the client, traced to browser tests. A sentence a user
// relies on ends with an id in brackets, `[P-some-name]`; a browser test (tests/web_*.rs,
// or a node test under tests/e2e/, tests/consumer/, tests/csp/ or tests/pages/) that checks
// it has, in the comment lines directly above it, `// P-some-name: the sentence in short`
// (one line per id). Fails, listing what is wrong, when an id of the README has no test
// naming it, when a test names an id the README does not have, when such a comment stands
// above no test, when a test's line speaks of a refresh, a reload, a later page or another
// tab and the test never leaves its page, or when a promise whose README sentence does is
// named by no test that leaves its page (scripts/leaves-page.mjs says what leaving is).
// `node scripts/promises.mjs --list` prints each id with the tests that name it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { block, helpers, language, leavesPage, speaksOfOtherPage, supportFiles } from "./leaves-page.mjs";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const ID = "P-[a-z0-9]+(?:-[a-z0-9]+)*";
const README_ID = new RegExp(`\\[(${ID})\\]`, "g");
// Anything in brackets that starts like an id, to catch misspelt ones (`[P-Foo]`, `[P-a b]`).
const README_LOOSE = /\[P-[^\]\s]*\]?/g;
// `// P-some-name: what it checks`
const TEST_ID = new RegExp(`^\\s*//\\s*(${ID}):\\s*\\S`);
// A comment line that starts like an id but is not one in that form.
const TEST_LOOSE = /^\s*\/\/\s*P-\S/;

/**
 * The ids the README marks, each with the lines it is marked on; `sentences`: id -> the
 * text each mark closes (from the paragraph's, table cell's or previous mark's end).
 */
function readmeIds(problems, sentences) {
  const text = readFileSync(join(ROOT, "README.md"), "utf8");
  for (const para of text.split(/\n\s*\n|\|/)) {
    let from = 0;
    for (const m of para.matchAll(README_ID)) {
      sentences.set(m[1], `${sentences.get(m[1]) || ""} ${para.slice(from, m.index)}`);
      from = m.index + m[0].length;
    }
  }
  const ids = new Map();
  text.split("\n").forEach((line, i) => {
    for (const m of line.matchAll(README_LOOSE)) {
      if (!new RegExp(`^\\[${ID}\\]$`).test(m[0])) {
        problems.push(`README.md:${i + 1}: ${m[0]} is not an id of the form [P-lowercase-words]`);
      }
    }
    for (const m of line.matchAll(README_ID)) {
      if (!ids.has(m[1])) ids.set(m[1], []);
      ids.get(m[1]).push(i + 1);
    }
  });
  return ids;
}

/** The browser test files: tests/web_*.rs and the node tests under tests/e2e, tests/consumer, tests/csp and tests/pages. */
function testFiles() {
  const walk = (dir) =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      if (f === "node_modules") return [];
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
  const web = readdirSync(join(ROOT, "tests"))
    .filter((f) => /^web_.*\.rs$/.test(f))
    .map((f) => join(ROOT, "tests", f));
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
const promised = readmeIds(problems, sentences);
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
    problems.push(`${id}: its README sentence speaks of a refresh, a reload, a later page or another tab, and no test ` +
      "naming it leaves its page: load a new page in one, or stop claiming it");
  }
}
for (const [id, lines] of promised) {
  if (!tested.has(id)) problems.push(`${id} (README.md:${lines.join(",")}) has no test: name it in a comment above a browser test`);
}
for (const [id, tests] of tested) {
  if (!promised.has(id)) problems.push(`${id} is named by ${tests.join("; ")} but the README has no [${id}]`);
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
  console.error("promises: the README marks no promise ([P-some-name])");
  process.exit(1);
}
console.log(`promises: ${promised.size} in README, each with a test`);

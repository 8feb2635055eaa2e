// The README's promises about the client, traced to browser tests. A sentence a user
// relies on ends with an id in brackets, `[P-some-name]`; a browser test (tests/web_*.rs,
// or a node test under tests/e2e/, tests/consumer/ or tests/csp/) that checks it has, in the comment
// lines directly above it, `// P-some-name: the sentence in short` (one line per id).
// Fails, listing what is wrong, when an id of the README has no test naming it, when a
// test names an id the README does not have, or when such a comment stands above no test.
// `node scripts/promises.mjs --list` prints each id with the tests that name it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const ID = "P-[a-z0-9]+(?:-[a-z0-9]+)*";
const README_ID = new RegExp(`\\[(${ID})\\]`, "g");
// Anything in brackets that starts like an id, to catch misspelt ones (`[P-Foo]`, `[P-a b]`).
const README_LOOSE = /\[P-[^\]\s]*\]?/g;
// `// P-some-name: what it checks`
const TEST_ID = new RegExp(`^\\s*//\\s*(${ID}):\\s*\\S`);
// A comment line that starts like an id but is not one in that form.
const TEST_LOOSE = /^\s*\/\/\s*P-\S/;

/** The ids the README marks, each with the lines it is marked on. */
function readmeIds(problems) {
  const text = readFileSync(join(ROOT, "README.md"), "utf8");
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

/** The browser test files: tests/web_*.rs and the node tests under tests/e2e, tests/consumer and tests/csp. */
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
  const node = ["e2e", "consumer", "csp"].flatMap((d) => walk(join(ROOT, "tests", d))).filter((f) => /\.m?js$/.test(f));
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

/** Every id a test names: id -> [`file: test`]. */
function testIds(problems) {
  const ids = new Map();
  for (const file of testFiles()) {
    const rel = relative(ROOT, file);
    const lines = readFileSync(file, "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!TEST_LOOSE.test(lines[i])) continue;
      // A block of id lines, then the test they stand above.
      const block = [];
      let j = i;
      for (; j < lines.length && TEST_LOOSE.test(lines[j]); j++) {
        const m = lines[j].match(TEST_ID);
        if (m) block.push(m[1]);
        else problems.push(`${rel}:${j + 1}: write \`// P-some-name: what it checks\` (lowercase words, a colon, a text)`);
      }
      const name = testAt(lines, j);
      if (name === null) {
        if (block.length) problems.push(`${rel}:${i + 1}: ${block.join(", ")} stands above no test (the next line must start one)`);
      } else {
        for (const id of block) {
          if (!ids.has(id)) ids.set(id, []);
          ids.get(id).push(`${rel}: ${name}`);
        }
      }
      i = j;
    }
  }
  return ids;
}

const problems = [];
const promised = readmeIds(problems);
const tested = testIds(problems);
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

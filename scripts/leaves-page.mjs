// Whether a browser test leaves its page: for scripts/promises.mjs, which asks it of each
// test that names a promise whose README sentence speaks of a refresh, a reload, a later or
// earlier page or another tab. One page has one truth: a second `open()` of a scope in the
// page that opened it is answered from the page's memory, so a test of such a promise must
// load a new page (a reload, a navigation, a new window, a frame that imports the module
// anew) to observe what storage and the other tabs see.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// The words of a promise about another page than the one that made the record.
const OTHER_PAGE = /\b(refresh(es|ed)?|reload(s|ed)?|later page|earlier page|another tab|other tabs?|every tab|second tab|a tab that opens)\b/i;

/** Whether a promise's README sentence speaks of another page. */
export const speaksOfOtherPage = (sentence) => OTHER_PAGE.test(sentence);

// Calls that load a new page. Rust (wasm-bindgen-test): `Tab::open()`, a same-origin frame
// importing the shipped module anew. JS (playwright-core, WebDriver): a reload, a
// navigation, a new page or window, or a window a page opened.
const LEAVES = {
  rs: /\bTab::open\s*\(/,
  js: /\.(reload|goto|navigate|newPage|newWindow)\s*\(|\bopenPage\s*\(|\.go\s*\(\s*['"]|waitForEvent\(\s*['"](page|popup|load)['"]/,
};

/** Which language a test file is in: "rs" or "js". */
export const language = (file) => (file.endsWith(".rs") ? "rs" : "js");

/** The text from `lines[i]` to the bracket that closes the first `open` at or after it. */
export function block(lines, i, open = "{") {
  const close = open === "{" ? "}" : ")";
  let depth = 0;
  let started = false;
  const out = [];
  for (let j = i; j < lines.length; j++) {
    out.push(lines[j]);
    for (const ch of lines[j].replace(/\/\/.*$/, "")) {
      if (ch === open) { depth++; started = true; }
      else if (ch === close) depth--;
    }
    if (started && depth <= 0) break;
  }
  return out.join("\n");
}

// Function definitions: `fn name` (in `impl Type`: `Type::name`), `function name`,
// `const name = (...) =>`.
const RS_IMPL = /^impl(?:<[^>]*>)?\s+(?:\w+\s+for\s+)?(\w+)/;
const RS_FN = /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)/;
const JS_FN = /^\s*(?:export\s+)?(?:async\s+)?function\s+(\w+)|^\s*(?:export\s+)?const\s+(\w+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>/;

/** name -> body of every function defined in `files` (each a path), Rust and JS apart. */
export function helpers(files) {
  const defs = { rs: new Map(), js: new Map() };
  for (const file of files) {
    const lang = language(file);
    const lines = readFileSync(file, "utf8").split("\n");
    let impl = null;
    for (let i = 0; i < lines.length; i++) {
      const im = lines[i].match(RS_IMPL);
      if (lang === "rs" && im) impl = im[1];
      else if (lang === "rs" && /^\S/.test(lines[i]) && !/^(impl|\}|\/\/|#)/.test(lines[i])) impl = null;
      const m = lang === "rs" ? lines[i].match(RS_FN) : lines[i].match(JS_FN);
      if (!m) continue;
      const name = m[1] || m[2];
      const key = lang === "rs" && impl && /^\s/.test(lines[i]) ? `${impl}::${name}` : name;
      defs[lang].set(key, (defs[lang].get(key) || "") + "\n" + block(lines, i));
    }
  }
  return defs;
}

/** The support files whose helpers a test may call. */
export function supportFiles(root) {
  const dir = (d, re) => readdirSync(join(root, d)).filter((f) => re.test(f)).map((f) => join(root, d, f));
  return [...dir("tests/support", /\.(rs|mjs)$/), ...dir("tests/e2e", /\.mjs$/), ...dir("tests/pages", /\.mjs$/)];
}

/**
 * Whether `body` (a test's text, in `lang`) loads a new page itself or through a helper
 * it calls (free functions and `Type::name` calls, followed through `defs`).
 */
export function leavesPage(body, lang, defs) {
  const seen = new Set();
  const visit = (text) => {
    if (LEAVES[lang].test(text)) return true;
    for (const m of text.matchAll(/\b((?:\w+::)?\w+)\s*\(/g)) {
      const name = m[1];
      if (seen.has(name) || !defs[lang].has(name)) continue;
      seen.add(name);
      if (visit(defs[lang].get(name))) return true;
    }
    return false;
  };
  return visit(body);
}

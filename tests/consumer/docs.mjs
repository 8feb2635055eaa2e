// The code blocks of the module's documents (README.md and five files of docs/) come from
// files the consumer tests run. A block is preceded by
//   <!-- snippet: path/to/file#region -->
// and must equal, byte for byte, the lines between `#region NAME` and `#endregion` in that
// file (the whole file without `#region`). `node tests/consumer/docs.mjs --write` rewrites
// the documents' blocks from the files; docs.test.mjs checks them.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT } from "./lib.mjs";

export const README = join(ROOT, "README.md");
/** The documents of the npm module: README.md and the five of docs/ written for its
 * readers. The other files of docs/ are the backend conformance runner's and the server
 * crate's, whose code blocks are not regions of the module's examples. */
export const DOCUMENTS = [README, ...["guide", "tabs-and-storage", "payment-pages", "backend", "inside"]
  .map((name) => join(ROOT, "docs", `${name}.md`))];
const MARKER = /^<!-- snippet: ([^#\s]+)(?:#([\w-]+))? -->$/;
const FENCE = /^```/;

/** The text of region `name` of a repository file (the whole file when name is absent). */
export function region(file, name) {
  const text = readFileSync(join(ROOT, file), "utf8");
  if (!name) return text.replace(/\n$/, "");
  const lines = text.split("\n");
  const start = lines.findIndex((l) => new RegExp(`#region ${name}(\\s|$)`).test(l));
  if (start < 0) throw new Error(`${file}: no #region ${name}`);
  const end = lines.findIndex((l, i) => i > start && /#endregion\b/.test(l));
  if (end < 0) throw new Error(`${file}: #region ${name} has no #endregion`);
  return lines.slice(start + 1, end).join("\n");
}

/** Every fenced block of a document: { line, lang, body, start, end, marker? }. */
export function blocks(text, name = "README.md") {
  const lines = text.split("\n");
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${name}:${i + 1}: unclosed code block`);
    const m = i > 0 ? lines[i - 1].match(MARKER) : null;
    out.push({
      line: i + 1, lang: lines[i].slice(3).trim(), body: lines.slice(i + 1, end).join("\n"),
      start: i, end, marker: m ? { file: m[1], region: m[2] } : undefined,
    });
    i = end;
  }
  return out;
}

/** The document with every marked block replaced by its region. */
export function rewrite(text) {
  const lines = text.split("\n");
  for (const b of blocks(text).reverse()) {
    if (!b.marker) continue;
    lines.splice(b.start + 1, b.end - b.start - 1, ...region(b.marker.file, b.marker.region).split("\n"));
  }
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--write") {
  for (const file of DOCUMENTS) writeFileSync(file, rewrite(readFileSync(file, "utf8")));
  console.log("the code blocks of the module's documents rewritten from their files");
}

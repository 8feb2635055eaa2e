// Every relative link of the repository's Markdown files resolves: the file or directory it
// names exists (relative to the linking file), and a `#fragment` names a heading of the file
// it points at, spelt as GitHub makes heading anchors. Links into code blocks are not links
// and are not checked; absolute URLs (https:, mailto:) are left to the reader.
// Fails, listing each broken link with its file and line, and prints how many it checked.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
// Build output, installs and the VCS: not the repository's documents.
const SKIP = new Set([".git", "node_modules", "target", "pkg", "data", ".build"]);

/** The Markdown files of the repository. */
function markdownFiles(dir = ROOT) {
  return readdirSync(dir).sort().flatMap((f) => {
    if (SKIP.has(f) || f.startsWith(".")) return [];
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return markdownFiles(p);
    return f.endsWith(".md") ? [p] : [];
  });
}

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function prose(text) {
  let fenced = false;
  return text.split("\n").flatMap((line, i) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ line: line.replace(/`[^`]*`/g, ""), no: i + 1 }];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

const anchorCache = new Map();
/** The anchors of a Markdown file's headings (a repeated heading gets -1, -2, ...). */
function anchors(file) {
  if (!anchorCache.has(file)) {
    const seen = new Map();
    const out = new Set();
    for (const { line } of prose(readFileSync(file, "utf8").replace(/`([^`]*)`/g, "$1"))) {
      const m = line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
      if (!m) continue;
      const base = slug(m[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, out);
  }
  return anchorCache.get(file);
}

const problems = [];
let checked = 0;
for (const file of markdownFiles()) {
  const rel = relative(ROOT, file);
  for (const { line, no } of prose(readFileSync(file, "utf8"))) {
    // [text](target) and [text](target "title"); images too.
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      checked++;
      const [path, fragment] = target.split("#", 2);
      const to = path ? join(dirname(file), decodeURIComponent(path)) : file;
      if (!existsSync(to)) {
        problems.push(`${rel}:${no}: ${target}: ${relative(ROOT, to)} does not exist`);
      } else if (fragment !== undefined && to.endsWith(".md") && !anchors(to).has(fragment)) {
        problems.push(`${rel}:${no}: ${target}: ${relative(ROOT, to)} has no heading #${fragment}`);
      }
    }
  }
}
if (problems.length) {
  console.error(`links: ${problems.length} broken relative link(s):`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
if (checked === 0) {
  console.error("links: no relative link found in the Markdown files; is the walk wrong?");
  process.exit(1);
}
console.log(`links: ${checked} relative links in ${markdownFiles().length} Markdown files, each resolves`);

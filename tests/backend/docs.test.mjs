// docs/backend-crate.md cannot rot: every code block is the marked region of a file of the
// example shop, which make test-backend builds and runs, byte for byte (the README's markers:
// tests/consumer/docs.mjs); its relative links point at files that exist. To rewrite the blocks
// from the files: node -e 'import("./tests/consumer/docs.mjs").then(({ rewrite }) => { const fs =
// require("fs"), f = "docs/backend-crate.md"; fs.writeFileSync(f, rewrite(fs.readFileSync(f, "utf8"))); })'
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { blocks, region } from "../consumer/docs.mjs";
import { EXAMPLES, ROOT } from "../consumer/lib.mjs";

const DOC = join(ROOT, "docs/backend-crate.md");
const doc = readFileSync(DOC, "utf8");

test("every code block of the backend document is a region of the example shop", () => {
  const all = blocks(doc);
  assert.ok(all.length >= 4, `${all.length} blocks`);
  for (const b of all) {
    assert.ok(b.marker, `backend-crate.md:${b.line}: a code block without <!-- snippet: file#region -->`);
    assert.ok(EXAMPLES.backend.includes(b.marker.file),
      `backend-crate.md:${b.line}: ${b.marker.file} is not a file of the example shop`);
    assert.equal(b.body, region(b.marker.file, b.marker.region),
      `backend-crate.md:${b.line} differs from ${b.marker.file}#${b.marker.region}`);
  }
});

test("the backend document's relative links point at files that exist", () => {
  const links = [...doc.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
  for (const l of links) assert.ok(existsSync(join(ROOT, "docs", l)), `link ${l}`);
});

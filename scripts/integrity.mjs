// Writes PKG_DIR/integrity.json, the Subresource Integrity (SHA-384) hashes of the two files a
// page loads, and prints them: what `<script type="module" integrity>` and
// `init({ integrity })` take, and what a PCI DSS 6.4.3 script inventory records.
//   { "idemkey.js": "sha384-...", "idemkey_bg.wasm": "sha384-..." }
// Idempotent (the file is rewritten only when a hash changed). post-pack.sh runs it after
// the last change to either file; `make pack` runs it again to print them.
// Usage: node scripts/integrity.mjs PKG_DIR
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) throw new Error("usage: integrity.mjs PKG_DIR");
const FILES = ["idemkey.js", "idemkey_bg.wasm"];

const hashes = {};
for (const f of FILES) {
  const path = join(dir, f);
  if (!existsSync(path)) {
    console.error(`integrity: ${path} is missing; run make build first`);
    process.exit(1);
  }
  hashes[f] = `sha384-${createHash("sha384").update(readFileSync(path)).digest("base64")}`;
}
const out = join(dir, "integrity.json");
const text = JSON.stringify(hashes, null, 2) + "\n";
if (!existsSync(out) || readFileSync(out, "utf8") !== text) writeFileSync(out, text);
for (const f of FILES) console.log(`integrity: ${f.padEnd(16)} ${hashes[f]}`);

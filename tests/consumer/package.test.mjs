// The tarball as npm sees it: the files it ships, the package.json fields a consumer's
// tools read, resolution of every `exports` entry, and an import in Node (server-side
// rendering imports a page's modules; the glue must not touch browser globals on import).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ROOT, cargoVersion, freshInstall, removeUnlessKept, run, tarball } from "./lib.mjs";

let app;
let pj;
before(() => {
  app = freshInstall("package");
  pj = JSON.parse(readFileSync(join(app, "node_modules/idemkey/package.json"), "utf8"));
});
after(() => removeUnlessKept(app));

test("the tarball is pkg/idemkey-<Cargo.toml version>.tgz and ships the module, its types and nothing stray", () => {
  assert.ok(tarball().endsWith(`/idemkey-${cargoVersion()}.tgz`), tarball());
  const entries = execFileSync("tar", ["-tzf", tarball()], { encoding: "utf8" }).trim().split("\n").sort();
  // The licence is "MIT OR Apache-2.0": both texts ship; so does the changelog (post-pack.sh).
  for (const f of ["package.json", "idemkey.js", "idemkey.d.ts", "idemkey_bg.wasm", "README.md",
    "LICENSE-MIT", "LICENSE-APACHE", "CHANGELOG.md", "integrity.json"]) {
    assert.ok(entries.includes(`package/${f}`), `package/${f} in ${entries}`);
  }
  const allowed = /^package\/(package\.json|README\.md|LICENSE[-\w.]*|CHANGELOG\.md|idemkey\.js|idemkey\.d\.ts|idemkey_bg\.wasm|idemkey_bg\.wasm\.d\.ts|integrity\.json)$/;
  assert.deepEqual(entries.filter((e) => !allowed.test(e)), [], "unexpected files in the tarball");
});

test("the shipped integrity.json holds the SHA-384 SRI hashes of the shipped idemkey.js and idemkey_bg.wasm", () => {
  const dir = join(app, "node_modules/idemkey");
  const hashes = JSON.parse(readFileSync(join(dir, "integrity.json"), "utf8"));
  assert.deepEqual(Object.keys(hashes).sort(), ["idemkey.js", "idemkey_bg.wasm"]);
  for (const [f, h] of Object.entries(hashes)) {
    assert.equal(h, `sha384-${createHash("sha384").update(readFileSync(join(dir, f))).digest("base64")}`, f);
  }
});

test("the shipped README.md and CHANGELOG.md are the repository's (a stale pkg/ is rebuilt first)", () => {
  for (const f of ["README.md", "CHANGELOG.md"]) {
    const shipped = readFileSync(join(app, "node_modules/idemkey", f), "utf8");
    assert.ok(shipped === readFileSync(join(ROOT, f), "utf8"),
      `node_modules/idemkey/${f} differs from ${f}: run \`make build\` (wasm-pack copies README.md, post-pack.sh CHANGELOG.md)`);
  }
});

test("package.json carries Cargo.toml's metadata and the fields bundlers and tsc read", () => {
  assert.equal(pj.name, "idemkey");
  assert.equal(pj.version, cargoVersion());
  for (const f of ["description", "license", "homepage"]) assert.equal(typeof pj[f], "string", f);
  assert.match(pj.repository?.url ?? "", /^https:\/\//);
  assert.ok(pj.keywords?.includes("idempotency"));
  assert.equal(pj.type, "module");
  assert.equal(pj.main, "idemkey.js");
  assert.equal(pj.types, "idemkey.d.ts");
  assert.deepEqual(pj.exports, {
    ".": { types: "./idemkey.d.ts", import: "./idemkey.js", default: "./idemkey.js" },
    "./idemkey_bg.wasm": "./idemkey_bg.wasm",
    "./integrity.json": "./integrity.json",
    "./package.json": "./package.json",
  });
  // driver.js and options.js are joined into idemkey.js, whose evaluation only defines things (post-pack.sh).
  assert.equal(pj.sideEffects, false);
  assert.ok(Array.isArray(pj.files) && pj.files.includes("idemkey_bg.wasm"));
  assert.equal(pj.license, "MIT OR Apache-2.0");
  assert.equal(pj.dependencies, undefined, "no runtime dependencies");
  const installed = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
  assert.match(installed.dependencies.idemkey, /^file:.*idemkey-.*\.tgz$/);
});

test("every exports entry resolves to a shipped file", () => {
  const probe = join(app, "resolve.mjs");
  writeFileSync(probe, `for (const s of ["idemkey", "idemkey/idemkey_bg.wasm", "idemkey/integrity.json", "idemkey/package.json"])
  console.log(s, import.meta.resolve(s));\n`);
  const out = run("node", [probe], { cwd: app }).trim().split("\n").map((l) => l.split(" "));
  assert.equal(out.length, 4);
  for (const [spec, url] of out) {
    const path = new URL(url).pathname;
    assert.ok(path.startsWith(join(app, "node_modules/idemkey/")), `${spec} -> ${path}`);
    assert.ok(existsSync(path), `${spec} -> ${path} exists`);
  }
});

// P-node-import: in Node the module imports without touching browser globals
test("imports in Node without touching a browser global (SSR), and newKey() works after initSync", () => {
  const probe = join(app, "ssr.mjs");
  // Every browser global the module could reach for is a getter that records the touch;
  // the import must record none. Then the module is instantiated and asked for a key.
  writeFileSync(probe, `import { readFileSync } from "node:fs";
const BROWSER = ["window", "self", "document", "navigator", "location", "localStorage", "sessionStorage",
  "indexedDB", "fetch", "Request", "Response", "Headers", "AbortController", "crypto", "addEventListener"];
const touched = [];
const saved = BROWSER.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)]);
for (const name of BROWSER) {
  Object.defineProperty(globalThis, name, { configurable: true, get() { touched.push(name); return undefined; } });
}
const idemkey = await import("idemkey");
for (const [name, d] of saved) {
  if (d) Object.defineProperty(globalThis, name, d); else delete globalThis[name];
}
console.log(JSON.stringify(touched));
idemkey.initSync({ module: readFileSync(new URL(import.meta.resolve("idemkey/idemkey_bg.wasm"))) });
console.log(idemkey.newKey());\n`);
  const [touched, key] = run("node", [probe], { cwd: app }).trim().split("\n");
  assert.deepEqual(JSON.parse(touched), [], "browser globals read while importing");
  assert.match(key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

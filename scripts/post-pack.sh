#!/usr/bin/env bash
# Completes pkg/package.json after `wasm-pack build --release --target web --out-dir pkg`
# with what wasm-pack cannot take from Cargo.toml. Idempotent: running it twice gives
# the same file. Node only (no jq). Usage: scripts/post-pack.sh [PKG_DIR]
#
# Added or corrected:
#   exports     "." -> types/import/default, plus "./idemkey_bg.wasm" (bundlers that do not
#               understand `new URL(..., import.meta.url)`, e.g. esbuild, import the file
#               and pass its URL to init()) and "./package.json" (tools read it).
#   type        "module" (wasm-pack sets it for --target web; asserted here).
#   types       the .d.ts wasm-pack emits.
#   files       wasm-pack's list, checked against the directory (every entry must exist).
#   sideEffects false: evaluating idemkey.js, its `src/browser/` snippets included, only
#               defines functions, tables and caches (and gives its own Checkout class its
#               getters, getters.js, and guards it, freed.js); the work happens in init() and in calls, so it is side-effect
#               free and tree-shakable.
# It also makes the .d.ts name the TypeScript library it needs: wasm-bindgen declares
# `[Symbol.dispose](): void` on every class, which fails `tsc` (without skipLibCheck) in
# projects whose `lib` predates ES2025/esnext.disposable; a
# `/// <reference lib="esnext.disposable" />` line on top fixes that for every consumer.
# A snippet imported as a namespace for the wasm becomes an object of the fields it imports.
# The wasm's imports and exports get short names (wasm-bindgen's carry a hash each, twice over).
# Then the JS becomes one minified file: wasm-bindgen writes the JS snippets (src/browser/driver.js,
# storage.js, idb.js and options.js: each file ffi.rs names, and only those) to
# snippets/<crate>-<hash>/src/browser/ and imports them from idemkey.js; Rollup
# joins them all and terser minifies the result, local names included (the class keeps its name, so
# `Checkout.name` still reads "Checkout"; the doc comments live on in the .d.ts). One file
# compresses better than two, and a page makes one request fewer: 0.99 KiB less gzipped JS.
# A glue that imports no snippet is left as it is, so this stays idempotent.
# The joined file's default export is src/browser/init.js's init() (`integrity`,
# `wasm-blocked`), which loads the wasm and hands it to wasm-bindgen's initSync: wasm-bindgen's
# own loader is left out (0.27 KiB). The .d.ts names its options InitOptions.
# integrity.json (scripts/integrity.mjs): the SHA-384 SRI hashes of the final idemkey.js and
# idemkey_bg.wasm, listed in files and exports.
# CHANGELOG.md is copied in and listed in files: npm does not ship it on its own, and a
# consumer upgrading reads it from node_modules/idemkey/ or the registry's file view.
# The version is Cargo.toml's (wasm-pack copies it); this script checks they agree.
# Last, it instantiates the wasm in Node (initSync, then newKey()): an optimizer that
# corrupts the module (Debian's wasm-opt 108 points wasm-bindgen's `__wbindgen_externrefs`
# export at the function table) fails the build here, not in a customer's browser.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkg="${1:-$root/pkg}"

if [[ ! -f "$pkg/package.json" ]]; then
  echo "post-pack: $pkg/package.json is missing; run \`wasm-pack build --release --target web --out-dir pkg\` first" >&2
  exit 1
fi
command -v node >/dev/null || { echo "post-pack: node is required" >&2; exit 1; }

cargo_version="$(sed -n '/^\[package\]/,/^\[/{s/^version *= *"\([^"]*\)".*/\1/p}' "$root/Cargo.toml" | head -n1)"
if [[ -z "$cargo_version" ]]; then
  echo "post-pack: could not read [package] version from $root/Cargo.toml" >&2
  exit 1
fi

ROOT="$root" PKG_DIR="$pkg" CARGO_VERSION="$cargo_version" node --input-type=module - <<'JS'
import { readFileSync, readdirSync, writeFileSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.PKG_DIR;
const file = join(dir, "package.json");
const die = (msg) => { console.error(`post-pack: ${msg}`); process.exit(1); };

let pj;
try { pj = JSON.parse(readFileSync(file, "utf8")); }
catch (e) { die(`${file} is not valid JSON: ${e.message}`); }

if (typeof pj.name !== "string" || !pj.name) die("package.json has no name");
if (pj.version !== process.env.CARGO_VERSION)
  die(`package.json version ${pj.version} != Cargo.toml version ${process.env.CARGO_VERSION}; rebuild with wasm-pack`);

const base = pj.name.replace(/^@[^/]+\//, "").replace(/-/g, "_");
const js = `${base}.js`, dts = `${base}.d.ts`, wasm = `${base}_bg.wasm`;
for (const f of [js, dts, wasm])
  if (!existsSync(join(dir, f))) die(`${join(dir, f)} is missing (expected from wasm-pack --target web)`);

// The .d.ts: reference the lib that declares Symbol.dispose, once, when it is used.
const dtsPath = join(dir, dts);
const dtsText = readFileSync(dtsPath, "utf8");
const libRef = '/// <reference lib="esnext.disposable" />\n';
let dtsNew = /Symbol\.dispose/.test(dtsText) && !dtsText.startsWith(libRef) ? libRef + dtsText : dtsText;
// init() takes an `integrity` too (src/browser/init.js): its options get a name and a type.
const initArg = "{ module_or_path: InitInput | Promise<InitInput> }";
if (dtsNew.includes(initArg)) {
  const initOptions = `/**
 * What \`init()\` takes: where the wasm is (default: \`idemkey_bg.wasm\` beside idemkey.js) and,
 * optionally, the Subresource Integrity metadata its bytes must match (\`"sha384-..."\`, as in
 * the package's integrity.json); bytes that differ reject with the \`wasm-integrity\` IdemError
 * and are never compiled.
 */
export interface InitOptions {
  /** Where the wasm is, or its bytes. Default: \`idemkey_bg.wasm\` beside idemkey.js. */
  module_or_path?: InitInput | Promise<InitInput>;
  /**
   * The SRI metadata the wasm's bytes must match, e.g. \`"sha384-..."\` from integrity.json.
   * @example
   * await init({ integrity: hashes["idemkey_bg.wasm"] });
   */
  integrity?: string;
}

`;
  dtsNew = dtsNew.split(initArg).join("InitOptions").replace(/^export type InitInput\b/m, (m) => initOptions + m);
}
// Doc comments for the names wasm-bindgen declares without one (or with its generic one),
// so that an editor's hover on any public name says what it is for. Each is put in front
// of its declaration once: a declaration a doc comment already ends above is left alone.
const docs = [
  [/^( +)free\(\): void;$/m, `Frees this Checkout now rather than when the garbage collector comes: its \`onEvent\`
hears no more, and its methods and getters throw the \`freed\` IdemError. A submit in flight
goes on; the scope's other Checkouts are untouched. Call it when a component unmounts.
@example
onUnmounted(() => checkout.free());`],
  [/^( +)\[Symbol\.dispose\]\(\): void;$/m, `\`free()\`, for a \`using\` declaration: the Checkout is freed at the end of its block.
@example
{ using checkout = Checkout.open(options); await checkout.submit(order); }`],
  [/^()export type InitInput\b/m, `Where \`init()\` finds the wasm: a URL or request, a \`Response\`, its bytes, or a compiled
\`WebAssembly.Module\`. Default: \`idemkey_bg.wasm\` beside idemkey.js.`],
  [/^()export type SyncInitInput\b/m, `What \`initSync()\` compiles: the wasm's bytes, or a compiled \`WebAssembly.Module\`.`],
  [/^()export interface InitOutput\b/m, `The instantiated module's raw exports, which \`init()\` resolves with: for idemkey's own
glue, not for the page (use \`Checkout\` and \`newKey\`).`],
];
for (const [re, text] of docs) {
  const m = re.exec(dtsNew);
  if (!m) die(`${dts}: no declaration matches ${re} (wasm-bindgen's output changed?)`);
  const before = dtsNew.slice(0, m.index).trimEnd();
  if (before.endsWith("*/")) continue;
  const indent = m[1];
  const comment = `${indent}/**\n${text.split("\n").map((l) => `${indent} * ${l}`).join("\n")}\n${indent} */\n`;
  dtsNew = dtsNew.slice(0, m.index) + comment + dtsNew.slice(m.index);
}
// wasm-bindgen's words on init() and initSync() describe its own arguments; ours say what a
// checkout page needs: when to call it, and what it rejects with.
const initDoc = `/**
 * Loads and compiles the wasm, once however often it is called; call it when the page
 * loads (it compiles while it downloads), before the first \`Checkout.open()\`. Rejects with
 * the \`wasm-blocked\` IdemError when the page's Content-Security-Policy refuses WebAssembly
 * (add \`'wasm-unsafe-eval'\` to \`script-src\`), and with \`wasm-integrity\` when
 * \`integrity\` is given and the bytes do not match it.
 * @example
 * await init(); // or: await init({ integrity: hashes["idemkey_bg.wasm"] })
 */
`;
const initSyncDoc = `/**
 * Compiles the given wasm bytes (or module) at once, without a fetch: for workers and
 * tests that already hold them. Pages call \`init()\` instead.
 * @example
 * initSync({ module: bytes });
 */
`;
const genericDoc = /\/\*\*\n *\* (If `module_or_path`|Instantiates the given `module`)[\s\S]*?\*\/\n(?=export (default )?function (__wbg_init|initSync)\b)/g;
dtsNew = dtsNew.replace(genericDoc, (_m, first) => (first.startsWith("If") ? initDoc : initSyncDoc));
const dtsChanged = dtsNew !== dtsText;
if (dtsChanged) writeFileSync(dtsPath, dtsNew);

// CHANGELOG.md from the repository root, rewritten only when it differs.
const changelog = join(process.env.ROOT, "CHANGELOG.md");
let changelogChanged = false;
if (existsSync(changelog)) {
  const text = readFileSync(changelog, "utf8");
  const dest = join(dir, "CHANGELOG.md");
  if (!existsSync(dest) || readFileSync(dest, "utf8") !== text) {
    writeFileSync(dest, text);
    changelogChanged = true;
  }
}

// files: wasm-pack's list plus the three artefacts, deduplicated, each one checked.
const files = [...new Set([wasm, js, dts, ...(Array.isArray(pj.files) ? pj.files : [])])];
if (existsSync(join(dir, "CHANGELOG.md")) && !files.includes("CHANGELOG.md")) files.push("CHANGELOG.md");
// wasm-pack lists the licence files it copies only when they were already in pkg/ before the
// build (so a fresh clone's first build leaves them out), and npm ships LICENSE-MIT and
// LICENSE-APACHE only when listed: list every LICENSE* file that is there.
for (const f of readdirSync(dir).sort()) if (/^LICEN[CS]E/i.test(f) && !files.includes(f)) files.push(f);
// The snippets are joined into the glue below: neither listed nor shipped.
const shipped = files.filter((f) => f !== "snippets");
for (const f of shipped) if (!existsSync(join(dir, f))) die(`files lists ${f}, which is not in ${dir}`);
// The SRI hashes of the JS and the wasm: written last (scripts/integrity.mjs), once both are final.
if (!shipped.includes("integrity.json")) shipped.push("integrity.json");
// One order whatever pkg/ held before the build (wasm-pack lists the licences only when they
// were there): the three artefacts, then the rest sorted, so a fresh clone's package.json is
// byte for byte a rebuilt one's.
shipped.splice(0, shipped.length, wasm, js, dts, ...shipped.filter((f) => ![wasm, js, dts].includes(f)).sort());

const wanted = {
  type: "module",
  main: js,
  module: js,
  types: dts,
  exports: {
    ".": { types: `./${dts}`, import: `./${js}`, default: `./${js}` },
    [`./${wasm}`]: `./${wasm}`,
    "./integrity.json": "./integrity.json",
    "./package.json": "./package.json",
  },
  files: shipped,
  sideEffects: false,
};

// Stable key order: wasm-pack's metadata first, then ours, then anything else.
const order = ["name", "type", "collaborators", "description", "version", "license",
  "repository", "homepage", "keywords", "main", "module", "types", "exports", "files",
  "sideEffects", "dependencies"];
const merged = { ...pj, ...wanted };
const out = {};
for (const k of order) if (k in merged) out[k] = merged[k];
for (const k of Object.keys(merged)) if (!(k in out)) out[k] = merged[k];

const text = JSON.stringify(out, null, 2) + "\n";
const before = readFileSync(file, "utf8");
if (text !== before) writeFileSync(file, text);
const done = text === before && !dtsChanged && !changelogChanged;
console.log(`post-pack: ${dir} ${done ? "already complete" : "completed"} (${out.name}@${out.version})`);
JS

# wasm-bindgen imports a snippet once per `extern` block that reaches it (`import * as
# import1 from "./snippets/..."`, then import2, ...) and lists each under the same key of
# the import object, which esbuild warns about; the same module namespace each time, so the
# first one is kept. Idempotent: a glue without repeats is left as it is.
PKG_DIR="$pkg" node --input-type=module - <<'JS'
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const file = join(process.env.PKG_DIR, "idemkey.js");
const text = readFileSync(file, "utf8");
const first = new Map();
const lines = text.split("\n").filter((line) => {
  let m = line.match(/^import \* as (import\d+) from ("[^"]+")$/);
  if (m) {
    if (first.has(m[2])) return false;
    first.set(m[2], m[1]);
    return true;
  }
  m = line.match(/^\s*("[^"]+"): (import\d+),$/);
  return !m || !first.has(m[1]) || first.get(m[1]) === m[2];
});
if (lines.length < text.split("\n").length) writeFileSync(file, lines.join("\n"));
JS

# wasm-bindgen's glue imports the snippets; once joined with them (an earlier run of this
# script) it imports nothing, and the steps up to the smoke test are done.
glue="$pkg/idemkey.js"
fresh=""
if grep -qE "from *['\"]\./snippets/" "$glue"; then fresh=1; fi

# The glue, minified in place (whitespace and syntax: the names that short-names.mjs
# rewrites stay as wasm-bindgen wrote them); Deno and tsc read the `@ts-self-types` comment
# wasm-bindgen puts on top, so it is kept.
esbuild="$root/node_modules/.bin/esbuild"
[[ -x $esbuild ]] || { echo "post-pack: $esbuild is missing; run \`npm ci\`" >&2; exit 1; }
banner="$(head -n1 "$glue" | grep '^/\* @ts-self-types=' || true)"
if [[ -n $fresh ]]; then
  # wasm-bindgen's `initSync` warns on the console when given the module itself rather than
  # `{ module }`; both work, the package's `init()` passes the latter, and the .d.ts
  # declares both: the warning's 0.03 KiB go.
  # The driver's Machine class is not exported, and the driver frees each one itself: its
  # `Symbol.dispose` alias can never be called.
  perl -0pi -e 's/^if \(Symbol\.dispose\) Machine\.prototype\[Symbol\.dispose\] = Machine\.prototype\.free;\n//m or die "post-pack: Machine\x27s Symbol.dispose line not found in the glue (wasm-bindgen changed it)\n"' "$glue"
  perl -0pi -e 's/\}\s*else\s*\{\s*console\.warn\(\x27using deprecated parameters for `initSync\(\)`; pass a single object instead\x27\)\s*\}/}/ or die "post-pack: initSync\x27s deprecation warning not found in the glue (wasm-bindgen changed it)\n"' "$glue"
  # Fallbacks for browsers the module does not run in: every engine that compiles the wasm
  # (Chrome 85, Firefox 79, Safari 15) has FinalizationRegistry and TextEncoder's
  # encodeInto, and every string the wasm takes is passed with a realloc, so the branch
  # without one is never run: 0.09 KiB of gzipped glue.
  perl -0pi -e '($n = s/\(typeof FinalizationRegistry === \x27undefined\x27\)\s*\?\s*\{ register: \(\) => \{\}, unregister: \(\) => \{\} \}\s*:\s*//g) == 2 or die "post-pack: the two FinalizationRegistry fallbacks not found in the glue (wasm-bindgen changed them)\n"' "$glue"
  perl -0pi -e 's/\n    if \(realloc === undefined\) \{\n(?:        [^\n]*\n){5}    \}\n//m or die "post-pack: passStringToWasm0\x27s branch without realloc not found in the glue (wasm-bindgen changed it)\n"' "$glue"
  perl -0pi -e 's/^if \(!\(\x27encodeInto\x27 in cachedTextEncoder\)\) \{\n(?:    [^\n]*\n)+?\}\n//m or die "post-pack: the encodeInto polyfill not found in the glue (wasm-bindgen changed it)\n"' "$glue"
  if grep -qE "realloc === undefined|'encodeInto' in|typeof FinalizationRegistry" "$glue"; then
    echo "post-pack: a fallback is left in the glue" >&2; exit 1
  fi
  # A snippet's function that needs no glue of its own (`webLocks`) is imported by the wasm
  # straight from the snippet's module: wasm-bindgen imports that module as a namespace
  # (`import * as import1`) and hands the namespace over whole, so Rollup had to build an
  # object of every export of driver.js, each under its own name, and terser could inline
  # none of them: 155 bytes of gzipped glue. The namespace becomes an object of the fields
  # the wasm imports from that module (its import section says which).
  PKG_DIR="$pkg" node --input-type=module - <<'JS' || exit 1
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const dir = process.env.PKG_DIR;
const file = join(dir, "idemkey.js");
let text = readFileSync(file, "utf8");
const imports = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(join(dir, "idemkey_bg.wasm"))));
for (const [line, ns, mod] of [...text.matchAll(/^import \* as (import\d+) from ("[^"]+")$/gm)]) {
  const fields = imports.filter((i) => i.module === JSON.parse(mod)).map((i) => i.name);
  const key = `\n        ${mod}: ${ns},\n`;
  // The namespace is named twice, in its import and as that object's value, and nowhere
  // else: a use elsewhere would find a name no longer bound.
  const uses = text.match(new RegExp(`\\b${ns}\\b`, "g")).length;
  if (!fields.length || fields.some((f) => !/^[A-Za-z_$][\w$]*$/.test(f)) || text.split(key).length !== 2
    || uses !== 2) {
    console.error(`post-pack: the namespace ${ns} of ${mod} is not used as expected`);
    process.exit(1);
  }
  const names = fields.map((f) => `${f} as ${ns}_${f}`).join(", ");
  const object = fields.map((f) => `${f}: ${ns}_${f}`).join(", ");
  text = text.replace(line, () => `import { ${names} } from ${mod}`)
    .replace(key, () => `\n        ${mod}: { ${object} },\n`);
}
writeFileSync(file, text);
JS
  "$esbuild" "$glue" --minify-whitespace --minify-syntax --format=esm --legal-comments=none \
    --log-level=warning ${banner:+"--banner:js=$banner"} --outfile="$glue.min"
  mv "$glue.min" "$glue"
fi

# Short import and export names, in the wasm and the glue together (scripts/short-names.mjs
# says why).
node "$root/scripts/short-names.mjs" "$pkg"

# The glue and its snippets, joined and minified (see the top of this file). The snippet
# paths are gone from the import object's keys already (short names), so the wasm is as it
# was.
# The default export becomes src/browser/init.js's init() (over wasm-bindgen's initSync),
# src/browser/getters.js gives the Checkout class its getters, and src/browser/freed.js guards
# the class against use after free(): they are copied beside the driver.js snippet (which
# init.js and freed.js import), so that the one copy of driver.js serves all.
if [[ -n $fresh ]]; then
  joined="$(mktemp "$pkg/.joined.XXXXXX")"
  snippets="$(grep -oE "\./snippets/[^\"']+/src/browser/driver\.js" "$glue" | head -n1)"
  [[ -n $snippets ]] || { echo "post-pack: $glue imports no src/browser/driver.js snippet" >&2; exit 1; }
  cp "$root/src/browser/init.js" "$pkg/${snippets%driver.js}init.js"
  cp "$root/src/browser/freed.js" "$pkg/${snippets%driver.js}freed.js"
  cp "$root/src/browser/getters.js" "$pkg/${snippets%driver.js}getters.js"
  entry="$pkg/.entry.js"
  cat >"$entry" <<EOF
import { Checkout, initSync } from "./idemkey.js";
import { init as checkedInit } from "${snippets%driver.js}init.js";
import { guardFreed } from "${snippets%driver.js}freed.js";
import { defineGetters } from "${snippets%driver.js}getters.js";
export * from "./idemkey.js";
defineGetters(Checkout);
guardFreed(Checkout);
export default function init(options) {
  return checkedInit(initSync, options);
}
EOF
  "$root/node_modules/.bin/rollup" "$entry" --format es --failAfterWarnings -o "$joined" 2>"$joined.log" \
    || { cat "$joined.log" >&2; exit 1; }
  rm -f "$entry"
  # Two compress passes: the second finds what the first's inlining left (0.02 KiB).
  "$root/node_modules/.bin/terser" "$joined" --module --compress passes=2 --mangle --keep-classnames \
    --comments false -o "$joined.min"
  { if [[ -n $banner ]]; then printf '%s\n' "$banner"; fi; cat "$joined.min"; } >"$glue"
  rm -f "$joined" "$joined.min" "$joined.log"
  rm -rf "$pkg/snippets"
  echo "post-pack: $glue joined with its snippets and minified ($(wc -c <"$glue" | tr -d ' ') bytes)"
fi

# package.json lists no snippets: the glue must import none, and none may be left.
if grep -qE "['\"]\./snippets/" "$glue" || [[ -e "$pkg/snippets" ]]; then
  echo "post-pack: $glue still imports ./snippets/ (or $pkg/snippets is left): the join did not happen" >&2
  exit 1
fi

# The SRI hashes of the final idemkey.js and idemkey_bg.wasm, in integrity.json.
node "$root/scripts/integrity.mjs" "$pkg" >/dev/null

# Smoke test: the glue and the wasm load together and answer.
PKG_DIR="$pkg" node --input-type=module - <<'JS'
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const dir = process.env.PKG_DIR;
const pj = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const glue = await import(pathToFileURL(join(dir, pj.main)).href);
try {
  glue.initSync({ module: readFileSync(join(dir, pj.main.replace(/\.js$/, "_bg.wasm"))) });
  if (glue.Checkout.name !== "Checkout") throw new Error(`the class is named ${glue.Checkout.name}`);
  const key = glue.newKey();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(key)) throw new Error(`newKey() gave ${key}`);
} catch (e) {
  console.error(`post-pack: ${dir}: the built module does not load: ${e.message}`);
  console.error("post-pack: (seen with Debian's wasm-opt 108, which points the `__wbindgen_externrefs` export at the function table; binaryen 132 from npm works)");
  process.exit(1);
}
console.log("post-pack: the module instantiates and newKey() answers");
JS

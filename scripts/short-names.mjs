// Renames the wasm's imports from the JS glue and its exports to short names, in the wasm
// and in the glue together, and the modules it imports from (`./idemkey_bg.js`, the
// snippets' paths: keys of the import object, written in the wasm once per import).
// wasm-bindgen names each import after the JS function plus a 16-digit hash
// (`__wbg_getItem_49556a3e59cfb688`), and closures' entry points likewise
// (`wasm_bindgen__convert__closures_____invoke__h0085c9ea410ee7c7`); the hashes do not
// compress, and each name is written in the wasm and again in the glue (an import as a key
// of the import object, an export as `wasm.name`, once per use). The export `memory` keeps
// its name: `init()` resolves with the exports, and a page may read it.
// Usage: node scripts/short-names.mjs PKG_DIR   (idempotent: short names are left alone)
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) throw new Error("usage: short-names.mjs PKG_DIR");
const wasmPath = join(dir, "idemkey_bg.wasm");
const gluePath = join(dir, "idemkey.js");
const dtsPath = join(dir, "idemkey.d.ts");
const wasm = readFileSync(wasmPath);
let glue = readFileSync(gluePath, "utf8");
const MODULE = "./idemkey_bg.js";

const die = (msg) => { console.error(`short-names: ${msg}`); process.exit(1); };

// LEB128 unsigned, as the wasm binary format writes lengths and counts.
function readU32(buf, at) {
  let result = 0, shift = 0, byte;
  do {
    byte = buf[at++];
    result |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  return [result >>> 0, at];
}
function writeU32(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
}
const name = (buf, at) => {
  const [len, start] = readU32(buf, at);
  return [buf.toString("utf8", start, start + len), start + len];
};
const encodeName = (s) => { const b = Buffer.from(s, "utf8"); return Buffer.concat([writeU32(b.length), b]); };

if (wasm.readUInt32LE(0) !== 0x6d736100 || wasm.readUInt32LE(4) !== 1) die(`${wasmPath} is not a wasm module`);

// Short names in order: a, b, ..., z, A, ..., Z, aa, ab, ...
const ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const shortName = (i) => {
  let s = "";
  do { s = ALPHA[i % ALPHA.length] + s; i = Math.floor(i / ALPHA.length) - 1; } while (i >= 0);
  return `$${s}`;
};
// A name the glue mentions exactly once (as its import object key) can be renamed there.
const once = (n) => glue.split(n).length === 2 && new RegExp(`[\\s{,]${n.replace(/\$/g, "\\$")}:`).test(glue);

const parts = [wasm.subarray(0, 8)];
let at = 8, renamed = 0, kept = 0, next = 0;
// Each import module's short name: the wasm repeats the module's name in every import.
const modules = new Map();
while (at < wasm.length) {
  const id = wasm[at];
  const [size, body] = readU32(wasm, at + 1);
  const end = body + size;
  if (id === 7) {
    parts.push(exportSection(body, end));
    at = end;
    continue;
  }
  if (id !== 2) {
    parts.push(wasm.subarray(at, end));
    at = end;
    continue;
  }
  // The import section: rewrite the field names of the glue's module.
  const [count, first] = readU32(wasm, body);
  const out = [writeU32(count)];
  let p = first;
  for (let i = 0; i < count; i++) {
    const [mod, afterMod] = name(wasm, p);
    const [field, afterField] = name(wasm, afterMod);
    // The import's kind and type, copied as they are (up to the next import's start).
    const kind = wasm[afterField];
    let descEnd;
    if (kind === 0) descEnd = readU32(wasm, afterField + 1)[1]; // func: type index
    else if (kind === 1) { // table: reftype, limits
      const flags = wasm[afterField + 2];
      let q = readU32(wasm, afterField + 3)[1];
      if (flags & 1) q = readU32(wasm, q)[1];
      descEnd = q;
    } else if (kind === 2) { // memory: limits
      const flags = wasm[afterField + 1];
      let q = readU32(wasm, afterField + 2)[1];
      if (flags & 1) q = readU32(wasm, q)[1];
      descEnd = q;
    } else if (kind === 3) descEnd = afterField + 3; // global: valtype, mutability
    else if (kind === 4) descEnd = readU32(wasm, afterField + 2)[1]; // tag: attribute, type
    else die(`import ${mod}.${field}: unknown kind ${kind}`);
    let newField = field;
    if (mod.startsWith("$")) {
      console.log("short-names: already done");
      process.exit(0);
    }
    if (!modules.has(mod)) modules.set(mod, `$${modules.size}`);
    if (mod === MODULE && once(field)) {
      newField = shortName(next++);
      glue = glue.replace(new RegExp(`([\\s{,])${field}:`), `$1${newField}:`);
      renamed++;
    } else if (mod === MODULE) {
      kept++;
    }
    out.push(encodeName(modules.get(mod)), encodeName(newField), wasm.subarray(afterField, descEnd));
    p = descEnd;
  }
  if (p !== end) die("the import section did not parse to its end");
  // The import object's keys follow the module names (`"./idemkey_bg.js": {...}`); the
  // `import ... from "..."` lines, which name the real files, have no colon and stay.
  for (const [mod, short] of modules) {
    const key = `${JSON.stringify(mod)}:`;
    if (!glue.includes(key)) die(`the glue has no import object key ${key}`);
    glue = glue.split(key).join(`${JSON.stringify(short)}:`);
    renamed++;
  }
  const section = Buffer.concat(out);
  parts.push(Buffer.from([2]), writeU32(section.length), section);
  at = end;
}

// The export section, each export the glue reads only as `wasm.name` renamed (there and
// in the glue), `memory` and anything else the glue names otherwise left alone.
function exportSection(body, end) {
  const [count, first] = readU32(wasm, body);
  const out = [writeU32(count)];
  let p = first;
  for (let i = 0; i < count; i++) {
    const [field, afterField] = name(wasm, p);
    if (field.startsWith("$")) {
      console.log("short-names: already done");
      process.exit(0);
    }
    const descEnd = readU32(wasm, afterField + 1)[1]; // kind, then the index
    // A name with wasm-bindgen's hash, or a closure's entry point (named after its argument
    // types when the symbol carries no hash, as in a build of core and alloc from source), is
    // one token wherever the glue has it (the export, and the JS function of the same name
    // that calls it): every occurrence is renamed.
    const hashed = /__h[0-9a-f]{16}$/.test(field) || /__convert__closures_____invoke_/.test(field);
    const uses = new RegExp(`\\b${hashed ? "" : "wasm\\."}${field.replace(/\$/g, "\\$")}\\b`, "g");
    const mentions = glue.split(field).length - 1;
    let newField = field;
    if (field !== "memory" && mentions > 0 && (glue.match(uses) || []).length === mentions) {
      newField = shortName(next++);
      glue = glue.replace(uses, hashed ? newField : `wasm.${newField}`);
      renamed++;
    }
    out.push(encodeName(newField), wasm.subarray(afterField, descEnd));
    p = descEnd;
  }
  if (p !== end) die("the export section did not parse to its end");
  const section = Buffer.concat(out);
  return Buffer.concat([Buffer.from([7]), writeU32(section.length), section]);
}

if (renamed) {
  writeFileSync(wasmPath, Buffer.concat(parts));
  writeFileSync(gluePath, glue);
  // The .d.ts types what init() resolves with, export by export: `memory` is the one whose
  // name is kept, the others have no name a page could rely on.
  const dts = readFileSync(dtsPath, "utf8");
  const trimmed = dts.replace(/(export interface InitOutput \{\n)([^}]*)(\})/,
    (all, open, body, close) => open + body.split("\n").filter((l) => /^\s*readonly memory:/.test(l)).join("\n") + "\n" + close);
  if (!/export interface InitOutput \{\n\s*readonly memory: WebAssembly\.Memory;\n\}/.test(trimmed))
    die(`${dtsPath}: InitOutput is not as expected`);
  writeFileSync(dtsPath, trimmed);
}
console.log(`short-names: ${renamed} imports, exports and modules renamed${kept ? `, ${kept} kept (named elsewhere in the glue)` : ""}`);

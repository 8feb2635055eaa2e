// The checks of a release tarball against a rebuild of its source (scripts/verify.sh runs the
// rebuild, then this). Every check prints a line; the last line says whether the release
// is accepted, or names the first difference (the file, and the offset of its first
// differing byte).
//   --tarball T   the release's npm tarball (idemkey-<version>.tgz)
//   --sbom S      its bill of materials (idemkey-<version>.cdx.json, published beside it)
//   --rebuilt D   the package directory the rebuild wrote (its tarball and bill of materials)
//   --toolchain   only compare the tools the bill of materials records with this machine's
//                 (rustc, the wasm-bindgen CLI, wasm-pack, Node, npm): run before the rebuild
//   --paths P     colon-separated build paths the wasm must not hold (besides $HOME, /root,
//                 /home, /tmp, .cargo, .rustup, registry/src)
// Exit 0 when everything matched, 1 otherwise.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { unpack } from "./tarball.mjs";

const { values: opt } = parseArgs({
  options: {
    tarball: { type: "string" },
    sbom: { type: "string" },
    rebuilt: { type: "string" },
    toolchain: { type: "boolean", default: false },
    paths: { type: "string", default: "" },
  },
});
if (!opt.tarball || !opt.sbom || (!opt.rebuilt && !opt.toolchain)) {
  console.error("usage: verify.mjs --tarball T --sbom S (--rebuilt DIR | --toolchain) [--paths P]");
  process.exit(2);
}
for (const f of [opt.tarball, opt.sbom]) {
  if (!existsSync(f)) {
    console.error(`verify: ${f} is missing`);
    process.exit(2);
  }
}

const failures = [];
const ok = (msg) => console.log(`  ok    ${msg}`);
const bad = (msg) => {
  console.log(`  FAIL  ${msg}`);
  failures.push(msg);
};
const sha = (alg, bytes) => createHash(alg).update(bytes).digest("hex");
const sbom = JSON.parse(readFileSync(opt.sbom, "utf8"));

// The tools the release was built with, from its bill of materials.
function recordedTools() {
  const tools = new Map((sbom.metadata?.tools?.components ?? []).map((c) => [c.name, c]));
  const prop = (c, name) => c?.properties?.find((p) => p.name === name)?.value;
  const rustc = tools.get("rustc");
  return {
    rustc: rustc && `${rustc.version} ${prop(rustc, "idemkey:rustc:commit-hash")}`,
    "wasm-bindgen-cli": tools.get("wasm-bindgen-cli")?.version,
    "wasm-pack": tools.get("wasm-pack")?.version,
    node: tools.get("node")?.version,
    npm: tools.get("npm")?.version,
  };
}

function localTools() {
  const out = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8" }).trim();
    } catch {
      return "missing";
    }
  };
  const rv = Object.fromEntries(out("rustc", ["-vV"]).split("\n").slice(1).map((l) => l.split(": ")));
  return {
    rustc: `${rv.release} ${rv["commit-hash"]}`,
    "wasm-bindgen-cli": out("wasm-bindgen", ["--version"]).split(/\s+/)[1],
    "wasm-pack": out("wasm-pack", ["--version"]).split(/\s+/)[1],
    node: process.versions.node,
    npm: out("npm", ["--version"]),
  };
}

function checkToolchain() {
  console.log("toolchain (recorded in the bill of materials, against this machine):");
  const want = recordedTools();
  const have = localTools();
  for (const [name, v] of Object.entries(want)) {
    if (!v) bad(`the bill of materials records no ${name}`);
    else if (have[name] !== v) {
      const hint = name === "rustc"
        ? `: install it (rustup toolchain install ${v.split(" ")[0]} --component rust-src --target wasm32-unknown-unknown) and run with RUSTUP_TOOLCHAIN=${v.split(" ")[0]}`
        : "";
      bad(`${name}: the release was built with ${v}, this machine has ${have[name]}${hint}`);
    } else ok(`${name} ${v}`);
  }
}

/** The offset of the first byte where a and b differ, or -1. */
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

function compare(name, mine, theirs) {
  const at = firstDifference(mine, theirs);
  if (at < 0) return ok(`${name}: identical to the rebuild (${mine.length} bytes, sha256 ${sha("sha256", mine).slice(0, 16)}…)`);
  const byte = (buf) => (at < buf.length ? `0x${buf[at].toString(16).padStart(2, "0")}` : "end of file");
  bad(`${name} differs from the rebuild at offset ${at} (0x${at.toString(16)}): the release has ${byte(mine)}, ` +
    `the rebuild ${byte(theirs)} (sizes ${mine.length} and ${theirs.length})`);
}

function checkRebuild(files) {
  console.log(`the release's files, byte for byte, against the rebuild (${opt.rebuilt}):`);
  const pj = JSON.parse(files.get("package.json") ?? "{}");
  const rebuiltTgz = join(opt.rebuilt, `${pj.name}-${pj.version}.tgz`);
  if (!existsSync(rebuiltTgz)) return bad(`the rebuild wrote no ${rebuiltTgz}`);
  const theirs = unpack(rebuiltTgz);
  for (const name of [...new Set([...files.keys(), ...theirs.keys()])].sort()) {
    if (!theirs.has(name)) bad(`${name} is in the release, not in the rebuild`);
    else if (!files.has(name)) bad(`${name} is in the rebuild, not in the release`);
    else compare(name, files.get(name), theirs.get(name));
  }
  compare(`the tarball ${pj.name}-${pj.version}.tgz`, readFileSync(opt.tarball), readFileSync(rebuiltTgz));
  const rebuiltSbom = join(opt.rebuilt, `${pj.name}-${pj.version}.cdx.json`);
  if (!existsSync(rebuiltSbom)) bad(`the rebuild wrote no ${rebuiltSbom}`);
  else compare(`the bill of materials ${pj.name}-${pj.version}.cdx.json`, readFileSync(opt.sbom), readFileSync(rebuiltSbom));
}

function checkIntegrity(files) {
  console.log("Subresource Integrity (integrity.json, the hashes to pin):");
  let pinned;
  try {
    pinned = JSON.parse(files.get("integrity.json"));
  } catch {
    return bad("the release has no readable integrity.json");
  }
  for (const name of ["idemkey.js", "idemkey_bg.wasm"]) {
    const bytes = files.get(name);
    const want = bytes && `sha384-${createHash("sha384").update(bytes).digest("base64")}`;
    if (!bytes) bad(`${name} is not in the release`);
    else if (pinned[name] !== want) bad(`integrity.json gives ${name} ${pinned[name]}; the file's is ${want}`);
    else ok(`${name} ${want}`);
  }
}

function checkSbom(files) {
  console.log(`the bill of materials (${opt.sbom}) against the release:`);
  const hashOf = (c, alg) => c?.hashes?.find((h) => h.alg === alg)?.content;
  const tgz = readFileSync(opt.tarball);
  const main = sbom.metadata?.component;
  if (hashOf(main, "SHA-256") !== sha("sha256", tgz)) bad(`the tarball's SHA-256 is ${sha("sha256", tgz)}; the bill of materials gives ${hashOf(main, "SHA-256")}`);
  else ok(`the tarball's SHA-256 ${sha("sha256", tgz)} (npm's dist.integrity: sha512-${createHash("sha512").update(tgz).digest("base64")})`);
  const listed = new Map((sbom.components ?? []).filter((c) => c.type === "file").map((c) => [c.name, c]));
  for (const name of [...new Set([...files.keys(), ...listed.keys()])].sort()) {
    const c = listed.get(name);
    if (!c) bad(`${name} is in the tarball, not in the bill of materials`);
    else if (!files.has(name)) bad(`${name} is in the bill of materials, not in the tarball`);
    else if (hashOf(c, "SHA-256") !== sha("sha256", files.get(name))) bad(`${name}: its SHA-256 is ${sha("sha256", files.get(name))}; the bill of materials gives ${hashOf(c, "SHA-256")}`);
    else ok(`${name} sha256 ${hashOf(c, "SHA-256").slice(0, 16)}…`);
  }
}

// Printable runs of the wasm (what `strings` prints) that name a directory of a build machine.
function checkPaths(files) {
  console.log("build paths in the wasm:");
  const wasm = files.get("idemkey_bg.wasm");
  if (!wasm) return bad("idemkey_bg.wasm is not in the release");
  const needles = ["/root/", "/home/", "/tmp/", ".cargo", ".rustup", "registry/src", homedir(),
    ...opt.paths.split(":").filter(Boolean)];
  const runs = wasm.toString("latin1").match(/[\x20-\x7e]{4,}/g) ?? [];
  const found = runs.filter((r) => needles.some((n) => r.includes(n)));
  if (found.length) bad(`idemkey_bg.wasm holds build paths: ${found.slice(0, 3).map((r) => JSON.stringify(r.slice(0, 120))).join(", ")}`);
  else ok(`no ${needles.join(", ")} in ${runs.length} printable strings`);
}

checkToolchain();
if (!opt.toolchain) {
  const files = unpack(opt.tarball);
  checkRebuild(files);
  checkIntegrity(files);
  checkSbom(files);
  checkPaths(files);
}
if (failures.length) {
  console.log(`verify: REFUSED (${failures.length} checks failed); the first: ${failures[0]}`);
  process.exit(1);
}
console.log(opt.toolchain ? "verify: the tools are the release's" : `verify: ACCEPTED: ${opt.tarball} is the rebuild, byte for byte`);

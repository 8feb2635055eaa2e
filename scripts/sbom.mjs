// Writes the release's bill of materials, PKG_DIR/idemkey-<version>.cdx.json (CycloneDX 1.6
// JSON, made with the CycloneDX project's own library), beside the tarball `make pack` wrote:
// - the package (the tarball's SHA-256 and SHA-512) and each file in it (SHA-256, SHA-384);
// - the crates compiled into the wasm: the idemkey crate's normal dependencies for
//   wasm32-unknown-unknown, with their licences and Cargo.lock's SHA-256 of each .crate;
//   the procedural macros among them, and what those use, run on the build machine and are
//   listed with scope "excluded" (they write code, none of theirs is in the wasm);
// - core, alloc and compiler_builtins, which the release build compiles from the toolchain's
//   rust-src (-Zbuild-std=core,alloc) rather than taking the shipped ones;
// - where idemkey.js comes from: wasm-bindgen's glue joined with the crate's own driver;
// - the tools that wrote the bytes (rustc with its commit, the wasm-bindgen CLI, wasm-pack,
//   binaryen, esbuild, Rollup, terser, Node and npm, which packed the tarball), which the
//   verifier compares with the machine that rebuilds before it builds.
// Two runs on the same build give the same file: no timestamp, and a serial number made from
// the tarball's hash.
// Usage: node scripts/sbom.mjs PKG_DIR   (after `wasm-pack pack PKG_DIR`)
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Enums, Models, Serialize, Spec } from "@cyclonedx/cyclonedx-library";
import { PackageURL } from "packageurl-js";
import { unpack } from "./tarball.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = process.argv[2];
if (!dir) throw new Error("usage: sbom.mjs PKG_DIR");
const die = (msg) => {
  console.error(`sbom: ${msg}`);
  process.exit(1);
};
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: "utf8", cwd: root, ...opts }).trim();
const digest = (alg, bytes) => createHash(alg).update(bytes).digest("hex");
const H = Enums.HashAlgorithm;

const pj = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const tarball = join(dir, `${pj.name}-${pj.version}.tgz`);
let tgz;
try {
  tgz = readFileSync(tarball);
} catch {
  die(`${tarball} is missing: run \`wasm-pack pack ${dir}\` (make pack) first`);
}

// What the release build compiles, as cargo plans it (its unit graph, the build's own command:
// the Makefile passes STD_BUILD): the units for wasm32-unknown-unknown are in the wasm, the
// build machine's (procedural macros, build scripts and what they use) are not.
const unitGraph = JSON.parse(run("cargo", ["build", "--lib", "--release", "--target", "wasm32-unknown-unknown",
  "--locked", ...(process.env.STD_BUILD ?? "-Zbuild-std=core,alloc").split(/\s+/).filter(Boolean),
  "-Zunstable-options", "--unit-graph"], { env: { ...process.env, RUSTC_BOOTSTRAP: "1" }, maxBuffer: 64 << 20 }));
// Licences, descriptions and repositories from cargo metadata, checksums from Cargo.lock.
const meta = JSON.parse(run("cargo", ["metadata", "--locked", "--format-version", "1",
  "--filter-platform", "wasm32-unknown-unknown"], { maxBuffer: 64 << 20 }));
const lockSums = new Map([...readFileSync(join(root, "Cargo.lock"), "utf8")
  .matchAll(/^name = "([^"]+)"\nversion = "([^"]+)"\nsource = "[^"]+"\nchecksum = "([0-9a-f]{64})"/gm)]
  .map((m) => [`${m[1]}@${m[2]}`, m[3]]));

// The toolchain: rustc -vV names the release and the commit rust-src was cut from.
const rustcV = Object.fromEntries(run("rustc", ["-vV"]).split("\n").slice(1).map((l) => l.split(": ")));
const purlOf = (name, version) => new PackageURL("cargo", null, name, version, null, null).toString();
const rustPurl = (name, version, subpath) => new PackageURL("generic", "rust-lang", name, version,
  { vcs_url: `git+https://github.com/rust-lang/rust@${rustcV["commit-hash"]}` }, subpath).toString();

// One entry a crate: its source, name, version, and whether any unit of it is in the wasm.
const units = new Map();
for (const u of unitGraph.units) {
  if (u.mode !== "build" || u.target.kind.includes("custom-build")) continue;
  const m = /^(registry\+[^#]+|path\+file:\/\/[^#]+)#(?:([^@]+)@)?(.+)$/.exec(u.pkg_id);
  if (!m) die(`cargo's unit graph names a package as ${u.pkg_id}`);
  const name = m[2] ?? u.target.name;
  const entry = units.get(u.pkg_id) ?? { source: m[1], name, version: m[3], inWasm: false, deps: new Set() };
  entry.inWasm ||= u.platform === "wasm32-unknown-unknown";
  for (const d of u.dependencies) entry.deps.add(unitGraph.units[d.index].pkg_id);
  units.set(u.pkg_id, entry);
}
const sysrootLib = "/lib/rustlib/src/rust/library/";
const rootId = [...units.keys()].find((id) => id.startsWith("path+file://") && units.get(id).name === "idemkey" && !id.includes(sysrootLib));
if (!rootId) die("cargo's unit graph has no idemkey unit");

const refOfId = new Map();
const crates = [];
const toolchainCrates = [];
for (const [id, u] of units) {
  if (id === rootId) continue;
  if (u.source.startsWith("path+file://") && u.source.includes(sysrootLib)) {
    // core, alloc, compiler_builtins: compiled from the toolchain's rust-src.
    const dir = u.source.slice("path+file://".length);
    const license = /^license = "([^"]+)"/m.exec(readFileSync(join(dir, "Cargo.toml"), "utf8"))?.[1];
    if (!license) die(`${dir}/Cargo.toml names no licence`);
    const version = u.version === "0.0.0" ? rustcV.release : u.version;
    const c = new Models.Component(Enums.ComponentType.Library, u.name, {
      bomRef: `rust-lang:${u.name}`,
      version,
      purl: rustPurl(u.name, version, `library/${dir.split(sysrootLib)[1]}`),
      licenses: new Models.LicenseRepository([new Models.LicenseExpression(license)]),
      scope: u.inWasm ? Enums.ComponentScope.Required : Enums.ComponentScope.Excluded,
      properties: new Models.PropertyRepository([
        new Models.Property("idemkey:built-from", `the toolchain's rust-src (rustc ${rustcV.release}, commit ${rustcV["commit-hash"]}), compiled with the crate (-Zbuild-std=core,alloc)`)]),
    });
    toolchainCrates.push(c);
    refOfId.set(id, c.bomRef);
    continue;
  }
  if (!u.source.startsWith("registry+")) die(`${u.name} ${u.version} is not from a registry (${u.source}): the bill of materials names registry crates only`);
  const p = meta.packages.find((p) => p.name === u.name && p.version === u.version);
  const sum = lockSums.get(`${u.name}@${u.version}`);
  if (!p || !sum) die(`cargo metadata or Cargo.lock lacks ${u.name} ${u.version}`);
  const c = new Models.Component(Enums.ComponentType.Library, u.name, {
    bomRef: purlOf(u.name, u.version),
    version: u.version,
    purl: purlOf(u.name, u.version),
    description: p.description?.trim().replace(/\s+/g, " "),
    licenses: new Models.LicenseRepository([new Models.LicenseExpression(p.license)]),
    hashes: new Models.HashDictionary([[H["SHA-256"], sum]]),
    scope: u.inWasm ? Enums.ComponentScope.Required : Enums.ComponentScope.Excluded,
    externalReferences: p.repository ? new Models.ExternalReferenceRepository([
      new Models.ExternalReference(p.repository, Enums.ExternalReferenceType.VCS)]) : undefined,
    properties: u.inWasm ? undefined : new Models.PropertyRepository([
      new Models.Property("idemkey:build-only", "a procedural macro, or used by one or by a build script: runs on the build machine, nothing of it is in the wasm")]),
  });
  crates.push(c);
  refOfId.set(id, c.bomRef);
}
const bindgenVersion = units.get([...units.keys()].find((id) => units.get(id).name === "wasm-bindgen"))?.version
  ?? die("wasm-bindgen is not among the crates the build compiles");

// The shipped files, each with its hashes; the wasm and the JS say what they are made of.
const files = [...unpack(tarball)].map(([name, bytes]) => new Models.Component(Enums.ComponentType.File, name, {
  bomRef: `file:${name}`,
  hashes: new Models.HashDictionary([[H["SHA-256"], digest("sha256", bytes)], [H["SHA-384"], digest("sha384", bytes)]]),
  description: {
    "idemkey_bg.wasm": "the module's WebAssembly: the idemkey crate, the crates it depends on for wasm32-unknown-unknown, core, alloc and compiler_builtins",
    "idemkey.js": `the JS glue wasm-bindgen ${bindgenVersion} writes for the wasm's exports, joined with the crate's own driver (src/browser/*.js) by Rollup and minified by esbuild and terser; it imports no other package`,
  }[name],
}));

// Who uses whom: each crate its units' dependencies; the wasm the crates in it; the JS glue
// wasm-bindgen, which wrote it.
for (const [id, u] of units) {
  const from = id === rootId ? null : crates.concat(toolchainCrates).find((c) => c.bomRef === refOfId.get(id));
  for (const d of u.deps) if (refOfId.has(d) && from) from.dependencies.add(refOfId.get(d));
}
const wasmFile = files.find((f) => f.name === "idemkey_bg.wasm") ?? die("the tarball has no idemkey_bg.wasm");
const jsFile = files.find((f) => f.name === "idemkey.js") ?? die("the tarball has no idemkey.js");
for (const c of [...crates, ...toolchainCrates]) if (c.scope === Enums.ComponentScope.Required) wasmFile.dependencies.add(c.bomRef);
jsFile.dependencies.add(refOfId.get([...units.keys()].find((id) => units.get(id).name === "wasm-bindgen")));
const inWasm = [...crates, ...toolchainCrates].filter((c) => c.scope === Enums.ComponentScope.Required);

// The tools whose versions decide the bytes.
const npmVersion = (name) => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
const tool = (name, version, properties = {}) => new Models.Component(Enums.ComponentType.Application, name, {
  bomRef: `tool:${name}`,
  version,
  properties: new Models.PropertyRepository(Object.entries(properties).map(([k, v]) => new Models.Property(k, v))),
});
const tools = [
  tool("rustc", rustcV.release, { "idemkey:rustc:commit-hash": rustcV["commit-hash"], "idemkey:rustc:llvm-version": rustcV["LLVM version"] }),
  tool("wasm-bindgen-cli", run("wasm-bindgen", ["--version"]).split(/\s+/)[1]),
  tool("wasm-pack", run("wasm-pack", ["--version"]).split(/\s+/)[1]),
  tool("binaryen", npmVersion("binaryen")),
  tool("esbuild", npmVersion("esbuild")),
  tool("rollup", npmVersion("rollup")),
  tool("terser", npmVersion("terser")),
  tool("node", process.versions.node),
  tool("npm", run("npm", ["--version"])),
  tool("@cyclonedx/cyclonedx-library", npmVersion("@cyclonedx/cyclonedx-library")),
];

const tgzSha256 = digest("sha256", tgz);
const hex = tgzSha256.slice(0, 32);
const serial = `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
const bom = new Models.Bom({
  serialNumber: serial,
  metadata: new Models.Metadata({
    component: new Models.Component(Enums.ComponentType.Library, pj.name, {
      bomRef: `pkg:npm/${pj.name}@${pj.version}`,
      version: pj.version,
      purl: new PackageURL("npm", null, pj.name, pj.version, null, null).toString(),
      description: pj.description,
      licenses: new Models.LicenseRepository([new Models.LicenseExpression(pj.license)]),
      hashes: new Models.HashDictionary([[H["SHA-256"], tgzSha256], [H["SHA-512"], digest("sha512", tgz)]]),
      properties: new Models.PropertyRepository([new Models.Property("idemkey:tarball", `${pj.name}-${pj.version}.tgz`)]),
    }),
    tools: new Models.Tools({ components: new Models.ComponentRepository(tools) }),
  }),
  components: new Models.ComponentRepository([...files, ...crates, ...toolchainCrates]),
});
bom.metadata.component.dependencies.add(wasmFile.bomRef);
bom.metadata.component.dependencies.add(jsFile.bomRef);

const serializer = new Serialize.JsonSerializer(new Serialize.JSON.Normalize.Factory(Spec.Spec1dot6));
const text = serializer.serialize(bom, { sortLists: true, space: 2 }) + "\n";
const out = join(dir, `${pj.name}-${pj.version}.cdx.json`);
writeFileSync(out, text);
console.log(`sbom: ${out}: ${files.length} files, ${inWasm.length} crates in the wasm, ` +
  `${crates.length + toolchainCrates.length - inWasm.length} build-only, ${toolchainCrates.map((c) => c.name).join(", ")} from rustc ${rustcV.release}`);

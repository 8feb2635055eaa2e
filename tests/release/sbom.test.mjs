// The release's bill of materials (pkg/idemkey-<version>.cdx.json, `make pack`) as a security
// team reads it: valid CycloneDX 1.6 (the schema the CycloneDX library ships, no download),
// its crates the wasm target's normal dependency tree as cargo resolves it plus core, alloc
// and compiler_builtins, its hashes the shipped files', the same file from a second run; and
// the package it describes runs nothing when installed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { Spec, Validation } from "@cyclonedx/cyclonedx-library";
import { ROOT } from "../support/reference.mjs";
import { release, unpack } from "./release.mjs";

const { pkg, name, tarball, sbomFile } = release();
const text = readFileSync(sbomFile, "utf8");
const sbom = JSON.parse(text);
const tmp = mkdtempSync(path.join(tmpdir(), "idemkey-sbom-test-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const validator = new Validation.JsonValidator(Spec.Version.v1dot6);

test("the bill of materials is valid CycloneDX 1.6, and a broken one is refused", async () => {
  assert.equal(sbom.bomFormat, "CycloneDX");
  assert.equal(sbom.specVersion, "1.6");
  assert.equal(await validator.validate(text), null);
  const broken = structuredClone(sbom);
  broken.components[0].type = "gadget";
  broken.components[1].hashes = [{ alg: "SHA-256", content: "not hex" }];
  const errors = await validator.validate(JSON.stringify(broken));
  assert.ok(errors, "the validator refuses an unknown component type and a malformed hash");
});

/** `name version` of each crate cargo tree lists for the wasm target, the crate itself left out. */
function cargoTree(edges) {
  const out = execFileSync("cargo", ["tree", "--locked", "-p", "idemkey", "--target", "wasm32-unknown-unknown",
    "-e", edges, "--prefix", "none", "-f", "{p}"], { cwd: ROOT, encoding: "utf8" });
  const crates = new Set(out.split("\n").map((l) => l.replace(/ \(.*$/, "").replace(/ v(\S+)$/, " $1")).filter(Boolean));
  crates.delete(`idemkey ${JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")).version}`);
  return crates;
}

test("its crates are the wasm target's normal dependency tree plus core, alloc and compiler_builtins", () => {
  const libraries = sbom.components.filter((c) => c.type === "library");
  const named = (scope) => new Set(libraries.filter((c) => c.scope === scope).map((c) => `${c.name} ${c.version}`));
  const rustc = execFileSync("rustc", ["-V"], { encoding: "utf8" }).split(" ")[1];
  const inWasm = cargoTree("normal,no-proc-macro");
  const sysroot = execFileSync("rustc", ["--print", "sysroot"], { encoding: "utf8" }).trim();
  const builtins = /^name = "compiler_builtins"\nversion = "([^"]+)"/m
    .exec(readFileSync(path.join(sysroot, "lib/rustlib/src/rust/library/Cargo.lock"), "utf8"))?.[1];
  assert.deepEqual(named("required"), new Set([...inWasm, `core ${rustc}`, `alloc ${rustc}`, `compiler_builtins ${builtins}`]));
  // The procedural macros and what they use, built for the build machine: every one of the
  // normal tree, and besides them only what build scripts use.
  const buildOnly = [...cargoTree("normal")].filter((c) => !inWasm.has(c));
  assert.ok(buildOnly.length > 0, "wasm-bindgen's and thiserror's macros are in the tree");
  for (const c of buildOnly) assert.ok(named("excluded").has(c), `${c} is listed, as build-only`);
  const withBuildScripts = cargoTree("normal,build");
  for (const c of named("excluded")) assert.ok(withBuildScripts.has(c), `${c} is a normal or build dependency`);
  for (const c of libraries) {
    assert.ok(c.licenses?.[0]?.expression, `${c.name} has its licence`);
    assert.ok(c.purl, `${c.name} has a purl`);
  }
  const lock = readFileSync(path.join(ROOT, "Cargo.lock"), "utf8");
  for (const c of libraries.filter((c) => c.purl.startsWith("pkg:cargo/"))) {
    const sum = new RegExp(`name = "${c.name}"\\nversion = "${c.version}"\\nsource = "[^"]+"\\nchecksum = "([0-9a-f]+)"`).exec(lock)?.[1];
    assert.equal(c.hashes?.[0]?.content, sum, `${c.name}: Cargo.lock's checksum`);
  }
  const wasmRef = sbom.dependencies.find((d) => d.ref === "file:idemkey_bg.wasm");
  assert.equal(wasmRef.dependsOn.length, named("required").size, "the wasm depends on every required crate");
});

test("its hashes are the shipped files' and the tarball's", () => {
  const files = unpack(tarball);
  const listed = sbom.components.filter((c) => c.type === "file");
  assert.deepEqual(listed.map((c) => c.name).sort(), [...files.keys()].sort());
  const hash = (c, alg) => c.hashes.find((h) => h.alg === alg)?.content;
  for (const c of listed) {
    assert.equal(hash(c, "SHA-256"), createHash("sha256").update(files.get(c.name)).digest("hex"), c.name);
    assert.equal(hash(c, "SHA-384"), createHash("sha384").update(files.get(c.name)).digest("hex"), c.name);
  }
  const tgz = readFileSync(tarball);
  assert.equal(hash(sbom.metadata.component, "SHA-256"), createHash("sha256").update(tgz).digest("hex"));
  assert.equal(hash(sbom.metadata.component, "SHA-512"), createHash("sha512").update(tgz).digest("hex"));
  assert.equal(sbom.metadata.component.purl, `pkg:npm/${name}@${sbom.metadata.component.version}`);
});

test("a second run writes the same file", () => {
  const again = mkdtempSync(path.join(tmp, "again-"));
  for (const f of ["package.json", path.basename(tarball)]) copyFileSync(path.join(pkg, f), path.join(again, f));
  execFileSync("node", [path.join(ROOT, "scripts/sbom.mjs"), again], { cwd: ROOT, stdio: "pipe" });
  assert.equal(readFileSync(path.join(again, path.basename(sbomFile)), "utf8"), text);
});

test("the package runs nothing when installed: no install scripts, no dependencies", () => {
  const pj = JSON.parse(unpack(tarball).get("package.json"));
  assert.equal(pj.scripts, undefined, "package.json has no scripts (preinstall, install, postinstall, prepare)");
  assert.equal(pj.dependencies, undefined);
  assert.equal(pj.bin, undefined);
  assert.ok(!unpack(tarball).has("binding.gyp"), "no binding.gyp (npm would run node-gyp)");
});

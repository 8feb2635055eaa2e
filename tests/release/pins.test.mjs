// The build's check of its tools (scripts/pins.mjs, the first step of `make build`): a tool
// that is not the version its lock file names stops the build, saying which and what to run.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { ROOT } from "../support/reference.mjs";

const tmp = mkdtempSync(path.join(tmpdir(), "idemkey-pins-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A checkout with this one's lock files and these versions installed under node_modules/. */
function checkout(installed) {
  const dir = mkdtempSync(path.join(tmp, "checkout-"));
  for (const f of ["Cargo.lock", "package-lock.json"]) cpSync(path.join(ROOT, f), path.join(dir, f));
  for (const [name, version] of Object.entries(installed)) {
    mkdirSync(path.join(dir, "node_modules", name), { recursive: true });
    writeFileSync(path.join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, version }));
  }
  return dir;
}

const pins = (dir) => spawnSync("node", [path.join(ROOT, "scripts/pins.mjs"), dir], { encoding: "utf8" });
const locked = (name) => JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")).packages[`node_modules/${name}`].version;
const tools = ["binaryen", "esbuild", "rollup", "terser"];

test("the tools the lock files name pass", () => {
  const r = pins(checkout(Object.fromEntries(tools.map((t) => [t, locked(t)]))));
  assert.equal(r.status, 0, r.stderr);
});

test("another binaryen, or a missing terser, stops the build naming each", () => {
  const versions = Object.fromEntries(tools.map((t) => [t, locked(t)]));
  versions.binaryen = "108.0.0";
  delete versions.terser;
  const r = pins(checkout(versions));
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`node_modules/binaryen is 108\\.0\\.0; package-lock\\.json names ${locked("binaryen").replaceAll(".", "\\.")} \\(run npm ci\\)`));
  assert.match(r.stderr, /node_modules\/terser is missing; package-lock\.json names/);
});

test("a wasm-bindgen CLI that is not Cargo.lock's wasm-bindgen stops the build", () => {
  const dir = checkout(Object.fromEntries(tools.map((t) => [t, locked(t)])));
  const lock = readFileSync(path.join(dir, "Cargo.lock"), "utf8");
  writeFileSync(path.join(dir, "Cargo.lock"), lock.replace(/(name = "wasm-bindgen"\nversion = ")[^"]+/, "$10.2.1"));
  const r = pins(dir);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /the wasm-bindgen CLI is wasm-bindgen \S+; Cargo\.lock's wasm-bindgen is 0\.2\.1 \(cargo install --locked wasm-bindgen-cli --version 0\.2\.1\)/);
});

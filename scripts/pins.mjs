// Checked before the release build starts (`make build`): the tools that write the shipped
// bytes are the versions the lock files name, so that two builds of one commit run the same
// tools. The wasm-bindgen CLI writes the JS glue from the wasm's custom sections and must be
// the version of the `wasm-bindgen` crate in Cargo.lock; wasm-opt (npm's binaryen), esbuild,
// Rollup and terser rewrite the wasm and the JS and must be the versions package-lock.json
// names (`npm ci` installs them; a hand-run `npm install` can leave others). The Rust
// toolchain is recorded in the release's bill of materials and checked by the verifier
// (scripts/verify.sh), not here: a machine may build with another toolchain, but then it
// makes other bytes, and the verifier says so.
// Usage: node scripts/pins.mjs [ROOT]   (exit 1 with what differs; ROOT: the checkout, by
// default this script's)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url));
const problems = [];

/** The version of `name` in Cargo.lock (the one entry of that name). */
function cargoLockVersion(lock, name) {
  const versions = [...lock.matchAll(/^\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"/gm)]
    .filter((m) => m[1] === name).map((m) => m[2]);
  if (versions.length !== 1) throw new Error(`Cargo.lock names ${name} ${versions.length} times`);
  return versions[0];
}

const lock = readFileSync(join(root, "Cargo.lock"), "utf8");
const bindgen = cargoLockVersion(lock, "wasm-bindgen");
let cli = "";
try {
  cli = execFileSync("wasm-bindgen", ["--version"], { encoding: "utf8" }).trim();
} catch (e) {
  problems.push(`wasm-bindgen is not on PATH (${e.code ?? e.message}): make tool-wasm-bindgen installs ${bindgen}`);
}
if (cli && cli.split(/\s+/)[1] !== bindgen) {
  problems.push(`the wasm-bindgen CLI is ${cli}; Cargo.lock's wasm-bindgen is ${bindgen} (cargo install --locked wasm-bindgen-cli --version ${bindgen})`);
}

const npmLock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
for (const name of ["binaryen", "esbuild", "rollup", "terser"]) {
  const want = npmLock.packages?.[`node_modules/${name}`]?.version;
  const file = join(root, "node_modules", name, "package.json");
  const have = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : "missing";
  if (!want) problems.push(`package-lock.json names no ${name}`);
  else if (have !== want) problems.push(`node_modules/${name} is ${have}; package-lock.json names ${want} (run npm ci)`);
}

if (problems.length) {
  for (const p of problems) console.error(`pins: ${p}`);
  process.exit(1);
}
console.log(`pins: wasm-bindgen ${bindgen}, binaryen, esbuild, rollup and terser as the lock files name them`);

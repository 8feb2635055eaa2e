// Shared helpers of the consumer tests: the tarball, fresh installs, and the list of
// example files the tests run (docs.test.mjs checks that every code block of README.md and
// docs/ comes from one of them). The reference server and Chromium: tests/support/reference.mjs.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM, SERVER } from "../support/reference.mjs";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = join(ROOT, "node_modules/.bin");

/** The version, from its one place: Cargo.toml's [package]. */
export function cargoVersion() {
  const toml = readFileSync(join(ROOT, "Cargo.toml"), "utf8");
  const pkg = toml.split(/^\[package\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  const m = pkg.match(/^version\s*=\s*"([^"]+)"/m);
  if (!m) throw new Error("no [package] version in Cargo.toml");
  return m[1];
}

/** The packed tarball (run.sh packs it and passes its path). */
export function tarball() {
  const tgz = process.env.IDEMKEY_TGZ ?? join(ROOT, `pkg/idemkey-${cargoVersion()}.tgz`);
  if (!existsSync(tgz)) throw new Error(`${tgz} is missing: run tests/consumer/run.sh (it packs first)`);
  return tgz;
}

/** Fails (never skips) when a tool the tests need is missing. */
export function requireTools(...names) {
  for (const name of names) {
    const path = { chromium: CHROMIUM, server: SERVER }[name] ?? join(BIN, name);
    if (!existsSync(path)) throw new Error(`required tool missing: ${name} (${path})`);
  }
}

/** The example files the consumer tests use, by what they do with them. */
export const EXAMPLES = {
  // Installed into a fresh project, built by build.sh with Vite, esbuild, webpack and Rollup,
  // run in Chromium.
  bundled: ["examples/checkout/index.html", "examples/checkout/checkout.js", "examples/checkout/build.sh",
    "examples/checkout/webpack.config.js", "examples/checkout/rollup.config.js"],
  // Served as is with the installed package, no bundler, run in Chromium.
  unbundled: ["examples/no-bundler/index.html", "examples/checkout/checkout.js"],
  // Type-checked with tsc --strict --noEmit.
  typechecked: ["examples/typescript/every-name.ts", "examples/react/useCheckout.tsx"],
  // The framework apps (frameworks.test.mjs): each built with its framework's own tools,
  // which examples/frameworks/package.json installs for all four, and run in Chromium.
  frameworks: ["examples/frameworks/package.json", "examples/frameworks/package-lock.json",
    "examples/react/index.html", "examples/react/main.tsx", "examples/react/useCheckout.tsx",
    "examples/react/vite.config.js",
    "examples/nextjs/next.config.mjs", "examples/nextjs/app/layout.jsx", "examples/nextjs/app/page.jsx",
    "examples/nextjs/app/pay-form.jsx",
    "examples/vue/index.html", "examples/vue/main.js", "examples/vue/PayForm.vue", "examples/vue/vite.config.js",
    "examples/svelte/index.html", "examples/svelte/main.js", "examples/svelte/PayForm.svelte",
    "examples/svelte/vite.config.js"],
  // The axum shop on idemkey-axum: built and run, killed with kill -9 between its phases, in
  // both of the crate's modes, by make test-host's cargo test --workspace (its tests and the
  // helpers they share); docs/backend-crate.md quotes it.
  backend: ["examples/axum-orders/Cargo.toml", "examples/axum-orders/src/main.rs",
    "examples/axum-orders/src/provider.rs", "examples/axum-orders/src/bin/provider.rs",
    "examples/axum-orders/tests/kill9.rs", "examples/axum-orders/tests/kill9_dedup.rs",
    "examples/axum-orders/tests/common/mod.rs"],
};

/** A fresh directory with the tarball `npm install`ed (offline: it has no dependencies),
 * made in `parent` (default: the system's temporary directory). */
export function freshInstall(name, parent = tmpdir()) {
  const dir = mkdtempSync(join(parent, `idemkey-consumer-${name}-`));
  writeFileSync(join(dir, "package.json"),
    JSON.stringify({ name: `idemkey-consumer-${name}`, private: true, type: "module" }, null, 2) + "\n");
  // No lock file: a framework's tools find the project's root by its lock file.
  execFileSync("npm", ["install", "--offline", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", tarball()],
    { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
  return dir;
}

/** Copies repository files (paths relative to ROOT) into dir, flat. */
export function copyInto(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const f of files) cpSync(join(ROOT, f), join(dir, f.split("/").pop()));
}

export function removeUnlessKept(dir) {
  if (process.env.KEEP_CONSUMER) console.log(`# kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** Runs a command; on failure the error carries its output. */
export function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, {
      encoding: "utf8", stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PATH: `${BIN}:${process.env.PATH}` }, ...opts,
    });
  } catch (e) {
    e.message += `\n--- stdout ---\n${e.stdout ?? ""}\n--- stderr ---\n${e.stderr ?? ""}`;
    throw e;
  }
}

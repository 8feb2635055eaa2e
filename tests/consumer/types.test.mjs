// TypeScript consumers: every public name type-checks under `tsc --strict --noEmit`
// (with bundler and with node16 module resolution, both through the package's
// `exports`), and deliberate misuse fails on exactly the marked lines.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BIN, EXAMPLES, ROOT, copyInto, freshInstall, removeUnlessKept, requireTools } from "./lib.mjs";

const STUBS = ["tests/consumer/types/react.d.ts"];
const MISUSE = "tests/consumer/types/misuse.ts";
const RESOLUTIONS = {
  bundler: ["--module", "esnext", "--moduleResolution", "bundler"],
  nodenext: ["--module", "nodenext", "--moduleResolution", "nodenext"],
};

let app;
before(() => {
  requireTools("tsc");
  app = freshInstall("types");
  copyInto(join(app, "ts"), [...EXAMPLES.typechecked, ...STUBS, MISUSE]);
});
after(() => removeUnlessKept(app));

const base = (file) => file.split("/").pop();

function tsc(files, resolution) {
  const args = ["--strict", "--noEmit", "--pretty", "false", "--target", "es2022", "--lib", "es2022,dom",
    "--jsx", "react-jsx", "--skipLibCheck", "false", ...RESOLUTIONS[resolution], ...files.map((f) => `ts/${base(f)}`)];
  const r = spawnSync(join(BIN, "tsc"), args, { cwd: app, encoding: "utf8" });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("tsc --strict --noEmit", () => {
  for (const resolution of Object.keys(RESOLUTIONS)) {
    test(`every public name type-checks (moduleResolution ${resolution})`, () => {
      const r = tsc([...EXAMPLES.typechecked, ...STUBS], resolution);
      assert.equal(r.status, 0, r.out);
    });

    test(`deliberate misuse fails on the marked lines only (moduleResolution ${resolution})`, () => {
      const r = tsc([MISUSE], resolution);
      assert.notEqual(r.status, 0, "misuse.ts must not type-check");
      const src = readFileSync(join(ROOT, MISUSE), "utf8").split("\n");
      const expected = src.flatMap((line, i) => (/;\s*\/\/ MISUSE:/.test(line) ? [i + 1] : []));
      const errLines = [...r.out.matchAll(/^ts\/misuse\.ts\((\d+),\d+\): error TS\d+/gm)].map((m) => Number(m[1]));
      assert.ok(expected.length >= 3);
      assert.deepEqual([...new Set(errLines)].sort((a, b) => a - b), expected, r.out);
    });
  }

  test("the declarations expose no `any`", () => {
    const dts = readFileSync(join(app, "node_modules/idemkey/idemkey.d.ts"), "utf8");
    // The public part ends where wasm-bindgen's init types begin.
    const pub = dts.split(/^export type InitInput\b/m)[0].replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
    const hits = pub.split("\n").filter((l) => /\bany\b/.test(l));
    assert.deepEqual(hits, [], "`any` on the public surface");
  });
});

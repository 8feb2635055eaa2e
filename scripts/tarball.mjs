// The files of an npm tarball, by their path inside `package/`, as npm packed them: what the
// bill of materials (sbom.mjs), the verifier (verify.mjs) and the release tests read.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

/** Map of path (inside `package/`) to bytes, in sorted order; unpacked under a temporary directory. */
export function unpack(tarball) {
  const tmp = mkdtempSync(join(tmpdir(), "idemkey-tarball-"));
  try {
    execFileSync("tar", ["-xzf", tarball, "-C", tmp]);
    const files = new Map();
    const walk = (d) => {
      for (const name of readdirSync(d).sort()) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.set(relative(join(tmp, "package"), p), readFileSync(p));
      }
    };
    walk(join(tmp, "package"));
    return files;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

// What the release tests share: where `make pack` left the release (IDEMKEY_PKG picks another
// package directory), and a tarball's files.
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT, mustExist } from "../support/reference.mjs";

/** The package directory, its name, its tarball and the bill of materials beside it. */
export function release() {
  const pkg = path.resolve(ROOT, process.env.IDEMKEY_PKG || "pkg");
  mustExist(path.join(pkg, "package.json"), "build the package with `make pack`");
  const { name, version } = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8"));
  const tarball = path.join(pkg, `${name}-${version}.tgz`);
  const sbomFile = path.join(pkg, `${name}-${version}.cdx.json`);
  mustExist(tarball, "make the tarball with `make pack`");
  mustExist(sbomFile, "`make pack` writes the bill of materials beside the tarball");
  return { pkg, name, version, tarball, sbomFile };
}

/** The files of `tarball` by their path inside `package/` (scripts/tarball.mjs). */
export { unpack } from "../../scripts/tarball.mjs";

#!/usr/bin/env bash
# `make verify TARBALL=...`: rebuilds the release from this checkout's commit in a clean clone
# in another directory, with its own target/ directory, and compares (scripts/verify.mjs):
# every file of the tarball byte for byte, the tarball itself, the bill of materials, the SRI
# hashes of integrity.json and the SHA-256 of each file the bill of materials lists; and that
# the wasm holds no path of either build. Before it builds, the tools the bill of materials
# records (rustc and its commit, the wasm-bindgen CLI, wasm-pack, Node, npm) must be this
# machine's: another toolchain makes other bytes, and would only be found out an hour later.
#
# Usage: scripts/verify.sh TARBALL [SBOM]
#   SBOM defaults to the bill of materials beside the tarball (idemkey-<version>.cdx.json).
#   The clone is of HEAD; with changes not yet committed, of a commit of the working tree made
#   aside (no branch, index or stash changes), so that `make test` checks what is there.
#   The clone builds with a CARGO_HOME of its own that links to this one's registry (the
#   downloaded crates, under another path), and shares node_modules/ when its
#   package-lock.json is this checkout's (scripts/pins.mjs checks the build's npm tools
#   against the lock in the clone too); VERIFY_NPM_CI=1 runs `npm ci` in the clone instead.
#   KEEP_VERIFY=1 keeps the clone.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 1 ]] || { echo "usage: scripts/verify.sh TARBALL [SBOM]" >&2; exit 2; }
tarball="$(realpath "$1")"
sbom="$(realpath "${2:-${tarball%.tgz}.cdx.json}")"
[[ -f $tarball ]] || { echo "verify: $tarball is missing" >&2; exit 2; }
[[ -f $sbom ]] || { echo "verify: $sbom is missing: the bill of materials is published beside the tarball" >&2; exit 2; }

echo "verify: $tarball"
node "$root/scripts/verify.mjs" --tarball "$tarball" --sbom "$sbom" --toolchain

work="$(mktemp -d "${TMPDIR:-/tmp}/idemkey-verify.XXXXXX")"
if [[ -z ${KEEP_VERIFY:-} ]]; then trap 'rm -rf "$work"' EXIT; fi

# The working tree as a commit (files .gitignore leaves out are left out), made through an
# index of its own: neither the checkout's index nor its branches change.
head="$(git -C "$root" rev-parse HEAD)"
GIT_INDEX_FILE="$work/index" git -C "$root" read-tree "$head"
GIT_INDEX_FILE="$work/index" git -C "$root" add -A
tree="$(GIT_INDEX_FILE="$work/index" git -C "$root" write-tree)"
if [[ $tree == "$(git -C "$root" rev-parse "$head^{tree}")" ]]; then
  rev="$head"
  what="commit ${head:0:10}"
else
  # A machine without a git identity (a CI runner) still makes this commit.
  rev="$(GIT_AUTHOR_NAME=verify GIT_AUTHOR_EMAIL=verify@localhost GIT_COMMITTER_NAME=verify \
    GIT_COMMITTER_EMAIL=verify@localhost git -C "$root" commit-tree "$tree" -p "$head" -m "verify: the working tree")"
  what="the working tree of ${head:0:10} (changes not committed included)"
fi
# A directory of another depth and name than the checkout's: a path that leaked into the
# build would differ between the two.
clone="$work/rebuild/of/idemkey"
git clone --quiet --no-checkout "$root" "$clone"
git -C "$clone" -c advice.detachedHead=false checkout --quiet "$rev"
echo "verify: rebuilding $what in $clone"

make_args=()
if [[ -z ${VERIFY_NPM_CI:-} && -f $root/node_modules/.package-lock.json ]] \
  && cmp -s "$root/package-lock.json" "$clone/package-lock.json"; then
  ln -s "$root/node_modules" "$clone/node_modules"
  # The lock is the same: its install is not made again (make would run npm ci through the link).
  make_args+=(-o node_modules/.package-lock.json)
fi

# Another CARGO_HOME, whose registry is this machine's (nothing is downloaded again): the
# crates' sources sit under another path than in the first build, which must not matter.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
if [[ -d $cargo_home/registry ]]; then
  mkdir -p "$work/cargo-home"
  ln -s "$cargo_home/registry" "$work/cargo-home/registry"
  export CARGO_HOME="$work/cargo-home"
fi

start=$SECONDS
make -C "$clone" --no-print-directory "${make_args[@]}" pack >"$work/build.log" 2>&1 \
  || { tail -n 40 "$work/build.log" >&2; echo "verify: the rebuild failed (log: $work/build.log)" >&2; KEEP_VERIFY=1; trap - EXIT; exit 1; }
echo "verify: rebuilt in $((SECONDS - start)) s"

node "$root/scripts/verify.mjs" --tarball "$tarball" --sbom "$sbom" --rebuilt "$clone/pkg" \
  --paths "$root:$clone:$work"

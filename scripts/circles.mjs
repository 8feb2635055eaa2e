// Import circles between the files of a Rust crate: `node scripts/circles.mjs src sim/src`.
// Each file is a module (foo.rs and foo/mod.rs are `foo`; a file a `#[path = "x.rs"] mod name;`
// declares is `name` under the declaring file's module); each `use` of `crate::`, `super::`
// or `self::` paths, and each such path written inline in the code (`crate::a::b::f(..)`), is
// an edge to the deepest module of the path that is a file of the crate (an item's path ends
// at the module that defines it). A module that imports from a module that imports back,
// directly or through others, is a circle; the script prints each and exits 1. Parent
// modules re-exporting from their children (`pub use child::Item`) count too.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

function files(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".rs") ? [p] : [];
  });
}

// The module path of a file under `root`: ["core", "machine", "scope"].
function modulePath(root, file) {
  const parts = relative(root, file).replace(/\.rs$/, "").split("/");
  if (parts.at(-1) == "mod" || parts.at(-1) == "lib" || parts.at(-1) == "main") parts.pop();
  return parts;
}

// The text without comments and string literals (a path in either is no import).
function code(text) {
  return text.replace(/"(?:\\.|[^"\\])*"|\/\/[^\n]*/g, (m) => (m[0] == '"' ? '""' : ""));
}

// The paths a file names: its `use` declarations, braces expanded (`a::{b, c::d}`), and the
// `crate::`, `super::` and `self::` paths written inline.
function usePaths(text) {
  const out = [];
  const plain = code(text);
  for (const m of plain.matchAll(/\buse\s+([^;]+);/g)) expand(m[1].replace(/\s+/g, ""), out);
  const rest = plain.replace(/\buse\s+[^;]+;/g, "");
  for (const m of rest.matchAll(/(?<![\w:])(?:crate|super|self)(?:::(?:super|self|[A-Za-z_]\w*))+/g)) out.push(m[0]);
  return out;
}

// The modules `#[path = "x.rs"] mod name;` declares in `file`: [file of x.rs, name].
function pathModules(file) {
  const out = [];
  const raw = readFileSync(file, "utf8").replace(/\/\/[^\n]*/g, "");
  for (const m of raw.matchAll(/#\[path\s*=\s*"([^"]+)"\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/g)) {
    out.push([join(dirname(file), m[1]), m[2]]);
  }
  return out;
}

function expand(s, out, prefix = "") {
  const i = s.indexOf("{");
  if (i < 0) {
    out.push((prefix + s).split(" as ")[0]);
    return;
  }
  const head = s.slice(0, i);
  let depth = 0, start = i + 1;
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j];
    if (c == "{") depth++;
    else if (c == "}" && depth-- == 0) {
      expand(s.slice(start, j), out, prefix + head);
      break;
    } else if (c == "," && depth == 0) {
      expand(s.slice(start, j), out, prefix + head);
      start = j + 1;
    }
  }
}

let circles = 0;
for (const root of process.argv.slice(2)) {
  const all = files(root);
  // Files a `#[path]` declares are the modules it names, not modules of their own name.
  const declared = new Map();
  for (const f of all) {
    for (const [target, name] of pathModules(f)) declared.set(target, [f, name]);
  }
  const pathOf = (f) => {
    const d = declared.get(f);
    return d ? [...pathOf(d[0]), d[1]] : modulePath(root, f);
  };
  const mods = new Map(all.map((f) => [pathOf(f).join("::"), f]));
  const edges = new Map([...mods.keys()].map((m) => [m, new Set()]));
  for (const [mod, file] of mods) {
    const here = mod ? mod.split("::") : [];
    // A mod.rs's `super` is its parent; a leaf file's `self` is itself.
    for (const path of usePaths(readFileSync(file, "utf8"))) {
      const segs = path.split("::").filter(Boolean);
      let abs;
      if (segs[0] == "crate") abs = segs.slice(1);
      else if (segs[0] == "super" || segs[0] == "self") {
        abs = [...here];
        while (segs[0] == "super" || segs[0] == "self") if (segs.shift() == "super") abs.pop();
        abs.push(...segs);
      } else continue;
      let target = null;
      for (let n = abs.length; n >= 0; n--) {
        const cand = abs.slice(0, n).join("::");
        if (mods.has(cand)) { target = cand; break; }
      }
      if (target != null && target != mod) edges.get(mod).add(target);
    }
  }
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set();
  const visit = (v) => {
    idx.set(v, index); low.set(v, index++); stack.push(v); on.add(v);
    for (const w of edges.get(v)) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) == idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); on.delete(w); comp.push(w); } while (w != v);
      if (comp.length > 1) {
        circles++;
        console.log(`${root}: circle: ${comp.map((m) => relative(".", mods.get(m))).join(" <-> ")}`);
      }
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
}
if (circles) process.exit(1);
console.log(`circles: none in ${process.argv.slice(2).join(", ")}`);

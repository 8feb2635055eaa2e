// A small seeded random generator, so one SEED always yields the same chaos plan.
// Each checkout gets its own stream (seed + its index): the plan of checkout 17 does
// not change when the run is longer or shorter.

/** 32-bit FNV-1a of a string: turns any SEED text into a generator state. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** mulberry32: fast, well mixed, and enough for choosing test moves. */
export function rng(seedText) {
  let a = hash(String(seedText));
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    /** A float in [0, 1). */
    next,
    /** An integer in [lo, hi], both included. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    /** True with probability p. */
    chance: (p) => next() < p,
    /** One element of a list. */
    pick: (list) => list[Math.floor(next() * list.length)],
    /** A key of `weights` ({ name: weight }), drawn in proportion to its weight. */
    weighted(weights) {
      const entries = Object.entries(weights);
      let x = next() * entries.reduce((s, [, w]) => s + w, 0);
      for (const [name, w] of entries) {
        x -= w;
        if (x < 0) return name;
      }
      return entries[entries.length - 1][0];
    },
  };
}

/** A fresh seed for a run that was given none (printed, so the run can be repeated). */
export function newSeed() {
  return Math.floor(Math.random() * 0xffffffff).toString(16).padStart(8, '0');
}

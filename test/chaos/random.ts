// The chaos run's seeded randomness: the same seed gives the same nemesis schedule and the same
// choices of each client (what it does next, which process it asks), so a run that found a
// fault can be run again. Timing still differs between two runs (the machine's load decides
// which request lands first); the schedule and each client's sequence of choices do not.

/** A source of numbers in [0, 1) with helpers, from a 32-bit seed (mulberry32). */
export interface Rng {
  (): number;
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  /** One element of a non-empty list. */
  pick<T>(xs: readonly T[]): T;
  /** true with probability p. */
  chance(p: number): boolean;
  /** A list in a random order (a copy). */
  shuffle<T>(xs: readonly T[]): T[];
  /** An independent stream named by label: adding a draw to one stream shifts no other. */
  fork(label: string): Rng;
}

/** FNV-1a of a string mixed into a seed: the seed of a named substream. */
function mix(seed: number, label: string): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619) >>> 0;
  return h;
}

export function rng(seed: number): Rng {
  // mulberry32: a full-period 32-bit generator whose first draws are already spread for small
  // seeds (the bench's xorshift gives 0.0000... for seed 1), which a chaos seed usually is.
  let s = seed >>> 0;
  const next = (() => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }) as Rng;
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  next.pick = (xs) => {
    if (!xs.length) throw new Error('pick from an empty list');
    return xs[Math.floor(next() * xs.length)];
  };
  next.chance = (p) => next() < p;
  next.shuffle = (xs) => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
  next.fork = (label) => rng(mix(seed, label));
  return next;
}

/**
 * The seeded pseudo-random choices of a model run: numbers, picks, and the
 * sizes and contents of random host data. Every choice of a run comes from
 * here, in order, so that a seed replays the same operations.
 */

import { rng } from "../_gpu.ts";
import { WORD_COUNTS } from "./_options.ts";

/** Random choices drawn from one seeded sequence. */
export interface Rng {
  /** A number in [0, 1). */
  readonly random: () => number;
  /** An integer in [0, n). */
  readonly int: (n: number) => number;
  /** True with probability `p`. */
  readonly chance: (p: number) => boolean;
  /** One of `items`. */
  readonly pick: <T>(items: readonly T[]) => T;
  /** A u32. */
  readonly u32: () => number;
  /** `n` random bytes: zeros, a pattern, or noise. */
  readonly randomBytes: (n: number) => Uint8Array;
  /** An allocation size in bytes: sometimes 0 or odd, mostly a number of u32 words. */
  readonly randomSize: () => number;
}

/** The random choices of the run with seed `seed`. */
export function makeRng(seed: number): Rng {
  const random = rng(seed);
  const int = (n: number): number => Math.floor(random() * n);
  const chance = (p: number): boolean => random() < p;
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const u32 = (): number => (random() * 4294967296) >>> 0;

  const randomBytes = (n: number): Uint8Array => {
    const b = new Uint8Array(n);
    const mode = int(4);
    for (let i = 0; i < n; i++) b[i] = mode === 0 ? 0 : mode === 1 ? (i * 7 + n) & 255 : int(256);
    return b;
  };

  const randomSize = (): number => {
    const r = random();
    if (r < 0.04) return 0;
    if (r < 0.12) return 1 + int(23); // odd byte sizes: no launches on them
    return 4 * pick(WORD_COUNTS);
  };

  return { random, int, chance, pick, u32, randomBytes, randomSize };
}

/**
 * The memory churn pattern of issue 18 as a driver over any allocator: 10,000
 * operations, about 45% releases of a random live allocation and 55%
 * allocations (80% of 256 B–64 KiB, 20% of 64 KiB–1 MiB, uniform in each
 * range), at most 300 live at once. `bench/churn.ts` runs it through a client,
 * `churn_ratio_test.ts` through the pools on a fake storage.
 */

/** What the churn needs from an allocator: reserve `size` bytes, and a way to release them. */
export type ChurnAllocator = (size: number) => { release(): void };

/** What a churn run measured. */
export interface ChurnRun {
  /** Highest sum of requested live bytes. */
  peak: number;
  /** Requested bytes live at the end. */
  live: number;
  /** Highest value of `reserved()` seen after an allocation. */
  reservedPeak: number;
}

/** A small deterministic generator (mulberry32). */
export function churnRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs the pattern and leaves the final live set allocated (the caller reads
 * its reservation, then releases through `releaseAll`).
 *
 * @param alloc The allocator.
 * @param seed The generator's seed.
 * @param reserved Reads the allocator's reserved bytes (for `reservedPeak`).
 * @param ops Operations. @default 10000
 * @returns The figures and a function that releases what is still live.
 */
export function runChurn(
  alloc: ChurnAllocator,
  seed: number,
  reserved: () => number,
  ops = 10_000,
): ChurnRun & { releaseAll(): void } {
  const r = churnRng(seed);
  const live: { h: { release(): void }; size: number }[] = [];
  let liveBytes = 0;
  let peak = 0;
  let reservedPeak = 0;
  for (let i = 0; i < ops; i++) {
    if (live.length > 0 && (r() < 0.45 || live.length >= 300)) {
      const [x] = live.splice(Math.floor(r() * live.length), 1);
      x!.h.release();
      liveBytes -= x!.size;
      continue;
    }
    const size = r() < 0.8 ? 256 + Math.floor(r() * (65536 - 256)) : 65536 + Math.floor(r() * (1048576 - 65536));
    live.push({ h: alloc(size), size });
    liveBytes += size;
    peak = Math.max(peak, liveBytes);
    reservedPeak = Math.max(reservedPeak, reserved());
  }
  return {
    peak,
    live: liveBytes,
    reservedPeak,
    releaseAll: () => {
      for (const x of live) x.h.release();
    },
  };
}

/**
 * A training-like loop: per round, 100 activations of 4 KiB–1 MiB kept through a forward pass (two temporaries each),
 * released in a backward pass that takes a gradient of each, then 300 small optimizer temporaries: about 600
 * reservations in which the activations' pages stand empty, three times the compact pools' 200-reservation wait.
 *
 * @param reserve Reserves memory (a memory manager's `reserve`).
 * @param buffers How many device buffers the storage has made so far.
 * @param rounds Rounds to run.
 * @param random Random numbers in [0, 1).
 * @returns The buffers made in each round.
 */
export function trainingLoop(
  reserve: (size: number) => { drop(): void },
  buffers: () => number,
  rounds: number,
  random: () => number,
): number[] {
  const MiB = 1 << 20;
  const sizes = Array.from({ length: 100 }, () => 4096 + Math.floor(random() * (MiB - 4096)));
  const small = Array.from({ length: 300 }, () => 1024 + Math.floor(random() * 60_000));
  const made: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = buffers();
    const kept = sizes.map((s) => {
      for (let t = 0; t < 2; t++) reserve(s).drop();
      return reserve(s);
    });
    for (let i = kept.length - 1; i >= 0; i--) {
      const grad = reserve(sizes[i]!);
      kept[i]!.drop();
      grad.drop();
    }
    for (const s of small) reserve(s).drop();
    made.push(buffers() - before);
  }
  return made;
}

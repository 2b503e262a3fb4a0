/**
 * The samples of one candidate while it is being measured, and what the
 * adaptive strategy reads from them: the best time (without the warm-up
 * biased first sample once there are three), convergence, and the score.
 *
 * @module
 */

/** Samples needed before the first one is left out of `best` and the score. */
export const DISCARD_THRESHOLD = 3;

/**
 * Collected nanosecond samples of one candidate.
 *
 * @example Convergence after two samples that do not improve the best by 2%
 * ```ts
 * import { SampleSet } from "./sample_set.ts";
 * const s = new SampleSet();
 * for (const t of [100, 20, 20, 20, 20]) s.push(t);
 * console.log(s.best(), s.converged(), s.score()); // 20 true 20
 * ```
 */
export class SampleSet {
  #samples: number[] = [];
  #stalled = 0;
  #epsilon: number;
  #rounds: number;

  /**
   * Creates an empty set.
   *
   * @param epsilon Relative gain below which a new best counts as no progress. @default 0.02
   * @param rounds Consecutive samples without progress that mean convergence. @default 2
   */
  constructor(epsilon = 0.02, rounds = 2) {
    this.#epsilon = epsilon;
    this.#rounds = rounds;
  }

  /** Number of samples. */
  get length(): number {
    return this.#samples.length;
  }

  /** Every sample, oldest first. */
  get all(): readonly number[] {
    return this.#samples;
  }

  /**
   * Adds a sample.
   *
   * @param nanos The measured time.
   */
  push(nanos: number): void {
    const before = this.best();
    this.#samples.push(nanos);
    // This push retires the biased first sample: the two bests cover different samples, so no progress is read.
    if (this.#samples.length === DISCARD_THRESHOLD) {
      this.#stalled = 0;
      return;
    }
    const after = this.best()!;
    const improved = before === undefined || after < before * (1 - this.#epsilon);
    this.#stalled = improved ? 0 : this.#stalled + 1;
  }

  /** The samples that count: all of them, less the first once there are three. */
  reliable(): readonly number[] {
    return this.#samples.length >= DISCARD_THRESHOLD ? this.#samples.slice(1) : this.#samples;
  }

  /**
   * The best reliable time.
   *
   * @returns The minimum, or undefined without samples.
   */
  best(): number | undefined {
    const r = this.reliable();
    return r.length === 0 ? undefined : Math.min(...r);
  }

  /** True when the best has not improved by more than epsilon for `rounds` samples. */
  converged(): boolean {
    return this.#stalled >= this.#rounds;
  }

  /**
   * Whether `required` samples (the first one included: its bias is toward
   * slower) are at or under `limit`.
   *
   * @param limit Nanoseconds.
   * @param required How many.
   * @returns True when confirmed.
   */
  confirmedUnder(limit: number, required: number): boolean {
    return this.#samples.filter((t) => t <= limit).length >= required;
  }

  /**
   * The score, lower is better: `0.8·min + 0.2·median` of the reliable
   * samples (CubeCL's formula without its variance factor, which is ≈ 1).
   *
   * @returns The score, or undefined without samples.
   */
  score(): number | undefined {
    const r = [...this.reliable()].sort((a, b) => a - b);
    if (r.length === 0) return undefined;
    const mid = r.length >> 1;
    const median = r.length % 2 === 1 ? r[mid]! : (r[mid - 1]! + r[mid]!) / 2;
    return 0.8 * r[0]! + 0.2 * median;
  }
}

/**
 * The samples of one candidate while it is being measured, one per round:
 * what the adaptive strategy reads from them (the median, which is the
 * candidate's score, the best time and the short circuit's count).
 *
 * @module
 */

import { median } from "./noise.ts";

/**
 * Collected nanosecond samples of one candidate, one per round.
 *
 * @example The score is the median
 * ```ts
 * import { SampleSet } from "./sample_set.ts";
 * const s = new SampleSet();
 * for (const t of [30, 20, 25, 90]) s.push(t);
 * console.log(s.best(), s.score(), s.confirmedUnder(25, 2)); // 20 27.5 true
 * ```
 */
export class SampleSet {
  #samples: number[] = [];

  /** Number of samples. */
  get length(): number {
    return this.#samples.length;
  }

  /** Every sample, oldest first (sample `r` is from the batch's round `r`). */
  get all(): readonly number[] {
    return this.#samples;
  }

  /**
   * Adds a sample.
   *
   * @param nanos The measured time.
   */
  push(nanos: number): void {
    this.#samples.push(nanos);
  }

  /**
   * The best time.
   *
   * @returns The minimum, or undefined without samples.
   */
  best(): number | undefined {
    return this.#samples.length === 0 ? undefined : Math.min(...this.#samples);
  }

  /**
   * Whether `required` samples are at or under `limit`.
   *
   * @param limit Nanoseconds.
   * @param required How many.
   * @returns True when confirmed.
   */
  confirmedUnder(limit: number, required: number): boolean {
    return this.#samples.filter((t) => t <= limit).length >= required;
  }

  /**
   * The score, lower is better: the median of the samples (robust to the
   * outliers of a busy machine; candidates are compared round by round, see
   * `noise.ts`).
   *
   * @returns The score, or undefined without samples.
   */
  score(): number | undefined {
    return this.#samples.length === 0 ? undefined : median(this.#samples);
  }
}

/**
 * `anchor`: buckets a size to a power of a base, so that nearby shapes share
 * one autotune key (CubeCL's `anchor`, section 8.4 of the contract).
 *
 * @module
 */

import { describe } from "../_util/describe.ts";

/**
 * How finely keys are bucketed: `minimal` scales the base by 1.25 (fewer,
 * wider buckets), `balanced` keeps it, `extensive` scales it by 0.75, and
 * `full` does not anchor at all (every size is its own key).
 */
export type TuneLevel = "minimal" | "balanced" | "extensive" | "full";

/** Options of {@linkcode anchor}. */
export interface AnchorOptions {
  /** The base of the powers. @default 2 */
  base?: number;
  /** The smallest result. */
  min?: number;
  /** The largest result. */
  max?: number;
  /** The bucketing level. @default "balanced" */
  level?: TuneLevel;
}

const LEVEL_FACTOR: Readonly<Record<TuneLevel, number | null>> = {
  minimal: 1.25,
  balanced: 1,
  extensive: 0.75,
  full: null,
};

/** The smallest effective base (CubeCL's floor). */
const MIN_BASE = 1.1;

/**
 * Rounds `x` up to a power of `base` (scaled by the level), clamped to
 * `[min, max]`: `ceil(base^ceil(log_base x))`. With level `full`, `x` is
 * returned unchanged (and unclamped), as CubeCL does. Departure from CubeCL:
 * an exact power is never pushed one bucket up by floating-point error in the
 * logarithm (`anchor(2 ** 29)` is `2 ** 29`).
 *
 * @example Bucket matrix sizes
 * ```ts
 * import { anchor } from "./anchor.ts";
 * console.log(anchor(1000), anchor(1024), anchor(1025)); // 1024 1024 2048
 * console.log(anchor(3, { min: 16 }), anchor(70000, { max: 4096 })); // 16 4096
 * ```
 *
 * @param x The size, a non-negative finite number.
 * @param options Base, bounds and level.
 * @returns The bucket.
 * @throws {RangeError} When `x` is negative or not finite, the base is not
 * above 1, or `min` is greater than `max`.
 */
export function anchor(x: number, options: AnchorOptions = {}): number {
  const { base = 2, min, max, level = "balanced" } = options;
  if (!Number.isFinite(x) || x < 0) throw new RangeError(`anchor: x must be a finite number ≥ 0, got ${x}`);
  if (!Number.isFinite(base) || base <= 1) throw new RangeError(`anchor: base must be a number > 1, got ${base}`);
  if (min !== undefined && max !== undefined && min > max) {
    throw new RangeError(`anchor: min (${min}) is greater than max (${max})`);
  }
  const factor = LEVEL_FACTOR[level];
  if (factor === undefined) {
    throw new RangeError(`anchor: level must be "minimal", "balanced", "extensive" or "full", got ${describe(level)}`);
  }
  if (factor === null) return x;
  const b = Math.max(base * factor, MIN_BASE);
  let result = 0;
  if (x > 0) {
    let exp = Math.ceil(Math.log(x) / Math.log(b));
    // log(x)/log(b) can land a hair above an integer for an exact power: step back when the lower power covers x.
    if (Math.ceil(b ** (exp - 1)) >= x) exp -= 1;
    result = Math.ceil(b ** exp);
  }
  if (max !== undefined) result = Math.min(result, max);
  if (min !== undefined) result = Math.max(result, min);
  return result;
}

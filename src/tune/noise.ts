/**
 * Telling candidates apart within noise: a one-sided rank-sum test
 * (Mann–Whitney) of one candidate's samples against another's scaled by a
 * factor. Every sample of the candidate is compared with every scaled sample
 * of the other: it is **slower than factor × the other beyond noise** when it
 * is the slower one in so many of these pairs that samples of equal times
 * (in any order, with any noise) would give as many at most once in a
 * thousand (p ≤ 0.1%, the level of a decision that picks a later candidate
 * over an earlier one) or once in a hundred (p ≤ 1%, the level of an
 * elimination, which asks for a speed factor of 1.5).
 *
 * Ranks make the test indifferent to the size of outliers (a busy machine
 * makes a few samples several times slower) and exact for any distribution
 * of the noise: no spread is assumed or estimated. Its price is that small
 * counts cannot reach the level: with n samples each the least p is
 * 1 / C(2n, n), 1/252 for 5 (enough at 1%) and 1/3432 for 7 (enough at
 * 0.1%), so a decision between close candidates takes 7 rounds at least.
 *
 * @module
 */

/** Exact counts of the Mann–Whitney statistic, memoized: `counts(n, m)[u]` arrangements of n and m samples give U = u. */
const memo = new Map<number, Float64Array>();

function counts(n: number, m: number): Float64Array {
  const key = n * 4096 + m;
  let c = memo.get(key);
  if (c !== undefined) return c;
  c = new Float64Array(n * m + 1);
  if (n === 0 || m === 0) c[0] = 1;
  else {
    // The largest of all n + m samples is either one of the n (it beats all m: U grows by m) or one of the m.
    const a = counts(n - 1, m);
    const b = counts(n, m - 1);
    for (let u = 0; u <= n * m; u++) c[u] = (u >= m ? a[u - m] ?? 0 : 0) + (b[u] ?? 0);
  }
  memo.set(key, c);
  return c;
}

/** Exact counts up to this many samples a side; a normal approximation beyond. */
const EXACT = 40;

/**
 * The one-sided p-value that `xs` are larger than `ys`: the chance that
 * samples of equal times give a rank-sum statistic at least as large.
 *
 * @param xs The samples said to be larger.
 * @param ys The others.
 * @returns p, from 0 to 1 (1 when either side is empty).
 */
export function pLarger(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const m = ys.length;
  if (n === 0 || m === 0) return 1;
  let u = 0;
  for (const x of xs) for (const y of ys) u += x > y ? 1 : x === y ? 0.5 : 0;
  const k = Math.floor(u); // a tie counts a half (mid-ranks); a half left over is dropped, to the conservative side
  if (n <= EXACT && m <= EXACT) {
    const c = counts(n, m);
    let tail = 0;
    let all = 0;
    for (let v = 0; v <= n * m; v++) {
      all += c[v]!;
      if (v >= k) tail += c[v]!;
    }
    return tail / all;
  }
  const mean = n * m / 2;
  const sd = Math.sqrt(n * m * (n + m + 1) / 12);
  return 0.5 * erfc((k - 0.5 - mean) / (sd * Math.SQRT2));
}

/** The complementary error function (Abramowitz and Stegun 7.1.26, error < 1.5e-7). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * z);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const r = poly * Math.exp(-z * z);
  return x >= 0 ? r : 2 - r;
}

/** The level of a decision that picks a later candidate over an earlier one: 0.1%. */
export const DECISION_LEVEL = 0.001;

/** The level of an elimination (slower than the speed factor × the leader): 1%. */
export const ELIMINATION_LEVEL = 0.01;

/**
 * Whether `samples` are slower than `factor` × `other` beyond noise: the
 * rank-sum test's p is at most `level`.
 *
 * @example Identical work with noise is not slower beyond noise; 1.7× is, from 7 samples each
 * ```ts
 * import { slowerBeyondNoise } from "./noise.ts";
 * const leader = [100, 130, 101, 99, 160, 102, 100];
 * console.log(slowerBeyondNoise([103, 100, 99, 140, 101, 100, 180], leader, 1.03)); // false
 * console.log(slowerBeyondNoise([170, 196, 172, 169, 240, 168, 171], leader, 1.03)); // true
 * ```
 *
 * @param samples The candidate's samples.
 * @param other The other candidate's samples.
 * @param factor The scale of the other's samples (1.03 asks: more than 3% slower?).
 * @param level The test's level. @default DECISION_LEVEL (0.1%)
 * @returns True when slower beyond noise.
 */
export function slowerBeyondNoise(
  samples: readonly number[],
  other: readonly number[],
  factor: number,
  level: number = DECISION_LEVEL,
): boolean {
  return pLarger(samples, other.map((t) => t * factor)) <= level;
}

/**
 * Whether two candidates are surely tied: `samples` are, beyond noise, both
 * faster than `other` × (1 + band) and slower than `other` × (1 − band) (two
 * one-sided tests at 0.1% each): more samples would not tell them apart by
 * more than the band.
 *
 * @param samples The candidate's samples.
 * @param other The other's.
 * @param band The tie band (0.03 is 3%).
 * @returns True when surely tied.
 */
export function surelyTied(samples: readonly number[], other: readonly number[], band: number): boolean {
  return pLarger(other.map((t) => t * (1 + band)), samples) <= DECISION_LEVEL &&
    slowerBeyondNoise(samples, other, 1 - band);
}

/**
 * The median.
 *
 * @param xs The values (not modified).
 * @returns Their median, or NaN when there are none.
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

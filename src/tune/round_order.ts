/**
 * The order a round measures its candidates in, changed every round so that
 * what a place in a round costs (the first run after a wait slower, a clock
 * ramping up during the round) falls on every candidate alike.
 *
 * @module
 */

/**
 * The order of a round's samples: the live candidates turned by `round mod n`
 * places, reversed when ⌊round / n⌋ is odd. Every n rounds each candidate
 * has taken each position once; over 2n rounds this is every rotation of
 * their order both ways round, in which any two candidates stand at each
 * pair of positions as often one way as the other.
 *
 * @example Three candidates over six rounds
 * ```ts
 * import { roundOrder } from "./round_order.ts";
 * for (let r = 0; r < 6; r++) console.log(roundOrder(["a", "b", "c"], r).join(""));
 * // abc bca cab cba acb bac
 * ```
 *
 * @param live The live candidates, in the set's order.
 * @param round The round, from 0.
 * @returns Them in this round's order.
 */
export function roundOrder<T>(live: readonly T[], round: number): T[] {
  const n = live.length;
  if (n === 0) return [];
  const k = round % n;
  const turned = [...live.slice(k), ...live.slice(0, k)];
  return Math.floor(round / n) % 2 === 1 ? turned.reverse() : turned;
}

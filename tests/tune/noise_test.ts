/**
 * Contract under test: how candidates are told apart within noise (a
 * one-sided rank-sum test of one candidate's samples against another's
 * scaled, exact for small counts), and the order of a round's samples (every
 * rotation, both ways round).
 */

import assert from "node:assert/strict";
import { median, pLarger, slowerBeyondNoise, surelyTied } from "../../src/tune/noise.ts";
import { roundOrder } from "../../src/tune/round_order.ts";

Deno.test("the median of an odd and an even count, and of nothing", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

Deno.test("the rank-sum p-value is exact: every sample larger is 1/20 with 3 a side, 1/252 with 5, 1/3432 with 7", () => {
  assert.equal(pLarger([4, 5, 6], [1, 2, 3]), 1 / 20);
  assert.equal(pLarger([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]), 1 / 252);
  assert.equal(pLarger([8, 9, 10, 11, 12, 13, 14], [1, 2, 3, 4, 5, 6, 7]), 1 / 3432);
  assert.equal(pLarger([1, 2, 3], [4, 5, 6]), 1, "every sample smaller: nothing says larger");
  assert.equal(pLarger([2, 4, 6], [1, 3, 5]), 7 / 20); // U = 6 of 9: arrangements with U ≥ 6
  assert.equal(pLarger([], [1]), 1);
});

Deno.test("an outlier of any size counts as one sample, and equal samples say nothing", () => {
  const base = [10, 11, 12, 13, 14];
  assert.equal(pLarger([15, 16, 17, 18, 1e9], base), pLarger([15, 16, 17, 18, 19], base));
  assert.ok(pLarger(base, base) >= 0.5);
  assert.ok(pLarger([5, 5, 5], [5, 5, 5]) >= 0.5);
});

Deno.test("beyond 40 samples a side the p-value comes from the normal approximation and agrees with the exact one", () => {
  const xs = Array.from({ length: 40 }, (_, i) => i + 5.5);
  const ys = Array.from({ length: 40 }, (_, i) => i);
  const exact = pLarger(xs, ys);
  const approx = pLarger([...xs, 45.5], [...ys, 40]);
  assert.ok(exact > 0 && exact < 0.2 && Math.abs(approx - exact) < 0.05, `${exact} ${approx}`);
  const evens = Array.from({ length: 50 }, (_, i) => 2 * i);
  const odds = evens.map((x) => x + 1);
  assert.ok(Math.abs(pLarger(evens, odds) - 0.5) < 0.1, "interleaved: no side larger");
});

Deno.test("identical work measured with noise is not slower beyond noise; 1.5× is, from 7 samples each", () => {
  const leader = [100, 130, 101, 99, 160, 102, 100];
  assert.ok(!slowerBeyondNoise([103, 100, 99, 140, 101, 100, 180], leader, 1.03));
  assert.ok(slowerBeyondNoise([170, 196, 172, 169, 240, 168, 171], leader, 1.03));
  assert.ok(!slowerBeyondNoise([170, 196, 172, 169, 240, 168], leader.slice(0, 6), 1.03), "6 each cannot reach 0.1%");
  assert.ok(slowerBeyondNoise([200, 230, 205, 210, 250], leader.slice(0, 5), 1.2, 0.01), "5 each reach 1%");
});

Deno.test("surely tied: within the band both ways beyond noise, which takes 7 samples each", () => {
  const leader = [100, 101, 100, 102, 100, 101, 100];
  assert.ok(surelyTied([101, 100, 101, 100, 101, 100, 101], leader, 0.03));
  assert.ok(!surelyTied([101, 100, 101, 100, 101, 100], leader.slice(0, 6), 0.03));
  assert.ok(!surelyTied([101, 100, 101, 100, 101, 100, 160], leader, 0.03), "one slow sample leaves it open");
  assert.ok(!surelyTied([110, 111, 110, 112, 110, 111, 110], leader, 0.03), "10% slower is no tie");
});

Deno.test("over 2n rounds any two of n candidates stand at each pair of positions as often one way as the other", () => {
  for (const n of [2, 3, 4, 5]) {
    const live = Array.from({ length: n }, (_, i) => i);
    const seen = new Map<string, number>();
    for (let r = 0; r < 2 * n; r++) {
      const order = roundOrder(live, r);
      assert.deepEqual([...order].sort(), live, "each candidate once per round");
      for (let a = 0; a < n; a++) {
        for (let b = a + 1; b < n; b++) {
          const key = `${a},${b}@${order.indexOf(a)},${order.indexOf(b)}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
        }
      }
    }
    for (const [key, count] of seen) {
      const [pair, at] = key.split("@");
      const [p, q] = at!.split(",");
      assert.equal(seen.get(`${pair}@${q},${p}`), count, `n = ${n}: ${key}`);
    }
  }
  assert.deepEqual(roundOrder(["a", "b", "c"], 0), ["a", "b", "c"], "round 0 is the set's order");
});

/**
 * Contract under test: `TunePlan` batch order (section 8.4 test vectors and
 * behaviour 55), `anchor` (behaviour 56) and the sample statistics the
 * adaptive strategy reads.
 */

import assert from "node:assert/strict";
import { anchor, defineTunableSet } from "../../mod.ts";
import { type PlanEntry, TunePlan } from "../../src/tune/tune_plan.ts";
import { SampleSet } from "../../src/tune/sample_set.ts";

/** A candidate in the given groups: [group, group priority, priority within it]. */
function entry(...groups: [string, number, number][]): PlanEntry {
  return { priority: 0, groups: new Map(groups.map(([g, p, w]) => [g, [p, w] as const])) };
}
const ungrouped = (priority = 0): PlanEntry => ({ priority, groups: new Map() });

/** Every batch until the plan is exhausted (the final [] included). */
function batches(plan: TunePlan): number[][] {
  const out: number[][] = [];
  for (let b = plan.next();; b = plan.next()) {
    out.push(b);
    if (b.length === 0) return out;
  }
}

Deno.test("plan vector 1: ungrouped t0, g0 (2) with t1 (1) and t2 (2), g1 (1) with t3 (2) gives [0,2] [1] [3] []", () => {
  const plan = new TunePlan([ungrouped(), entry(["g0", 2, 1]), entry(["g0", 2, 2]), entry(["g1", 1, 2])]);
  assert.deepEqual(batches(plan), [[0, 2], [1], [3], []]);
});

Deno.test("plan vector 2: every candidate in a group and every batch failing visits [1] [0] [3] [2]", () => {
  const plan = new TunePlan([entry(["g0", 2, 1]), entry(["g0", 2, 2]), entry(["g1", 1, 1]), entry(["g1", 1, 2])]);
  assert.deepEqual(batches(plan).flat(), [1, 0, 3, 2]);
  assert.deepEqual(
    new TunePlan([entry(["g0", 2, 1]), entry(["g0", 2, 2]), entry(["g1", 1, 1]), entry(["g1", 1, 2])]).next(),
    [1],
  );
});

Deno.test("groups of equal priority merge into one batch per level", () => {
  const plan = new TunePlan([
    ungrouped(),
    entry(["g0", 2, 1]),
    entry(["g0", 2, 2]),
    entry(["g1", 1, 2]),
    entry(["g2", 1, 2]),
  ]);
  assert.deepEqual(batches(plan), [[0, 2], [1], [3, 4], []]);
});

Deno.test("a candidate in several groups is returned once, with its highest group", () => {
  const plan = new TunePlan([ungrouped(), entry(["g0", 1, 1], ["g1", 2, 2]), entry(["g0", 1, 2]), entry(["g1", 2, 3])]);
  assert.deepEqual(batches(plan), [[0, 3], [1], [2], []]);
});

Deno.test("a negative priority skips the candidate and the plan moves past the skipped level", () => {
  const plan = new TunePlan([ungrouped(), entry(["g0", 2, -1]), entry(["g0", 2, 2]), entry(["g1", 1, 2])]);
  assert.deepEqual(batches(plan), [[0, 2], [3], []]);
  assert.deepEqual(plan.skipped, [1]);
});

Deno.test("a group whose priority is negative is skipped whole, and its candidates are not offered by later groups", () => {
  const plan = new TunePlan([entry(["g0", -1, 5]), entry(["g0", -1, 1], ["g1", -2, 9]), entry(["g2", 1, 0])]);
  assert.deepEqual(batches(plan), [[2], []]);
  assert.deepEqual([...plan.skipped].sort(), [0, 1]);
});

Deno.test("when the first group level is skipped, the ungrouped candidates form the first batch alone", () => {
  const plan = new TunePlan([ungrouped(), entry(["g0", 2, -1]), entry(["g1", 1, 0])]);
  assert.deepEqual(batches(plan), [[0], [2], []]);
});

Deno.test("without groups every candidate is in the first batch, less those with a negative priority", () => {
  assert.deepEqual(batches(new TunePlan([ungrouped(), ungrouped()])), [[0, 1], []]);
  const plan = new TunePlan([ungrouped(), ungrouped(-1), ungrouped(3)]);
  assert.deepEqual(batches(plan), [[0, 2], []]);
  assert.deepEqual(plan.skipped, [1]);
});

Deno.test("defineTunableSet refuses duplicate names, missing runs and bad groups with messages naming them", () => {
  const run = () => 0;
  assert.throws(
    () => defineTunableSet({ name: "s", key: () => 0, candidates: [{ name: "a", run }, { name: "a", run }] }),
    /two candidates are named "a"/,
  );
  assert.throws(() => defineTunableSet({ name: "s", key: () => 0, candidates: [] }), /non-empty array/);
  assert.throws(
    // @ts-expect-error: run is missing
    () => defineTunableSet({ name: "s", key: () => 0, candidates: [{ name: "a" }] }),
    /candidate "a" needs a run function/,
  );
  assert.throws(
    // @ts-expect-error: group must be a string
    () => defineTunableSet({ name: "s", key: () => 0, candidates: [{ name: "a", run, group: 3 }] }),
    /group must be a string/,
  );
});

Deno.test("anchor rounds up to powers of the base and respects min and max", () => {
  assert.deepEqual([1, 2, 3, 1000, 1024, 1025].map((x) => anchor(x)), [1, 2, 4, 1024, 1024, 2048]);
  assert.equal(anchor(2 ** 29), 2 ** 29);
  assert.equal(anchor(0), 0);
  assert.equal(anchor(3, { min: 16 }), 16);
  assert.equal(anchor(5000, { max: 4096 }), 4096);
  assert.equal(anchor(10, { base: 10 }), 10);
  assert.equal(anchor(11, { base: 10 }), 100);
  assert.throws(() => anchor(-1), RangeError);
  assert.throws(() => anchor(4, { min: 8, max: 4 }), /min \(8\) is greater than max \(4\)/);
});

Deno.test("anchor levels: minimal widens the buckets, extensive narrows them, full keeps the size", () => {
  assert.equal(anchor(33, { level: "minimal" }), Math.ceil(2.5 ** 4)); // base 2.5: 39.0625 → 40
  assert.equal(anchor(33, { level: "extensive" }), Math.ceil(1.5 ** 9)); // base 1.5: 38.44 → 39
  assert.equal(anchor(33, { level: "full", max: 8 }), 33);
});

Deno.test("samples: the score is the median of every sample, the best the least, and the short circuit counts them", () => {
  const s = new SampleSet();
  s.push(30);
  s.push(20);
  assert.equal(s.best(), 20);
  assert.equal(s.score(), 25);
  s.push(90);
  assert.equal(s.score(), 30);
  assert.ok(s.confirmedUnder(30, 2));
  assert.ok(!s.confirmedUnder(25, 2));
});

/**
 * `planCountCopies`: a graph copies each indirect count that shares a page
 * with its bindings only where its slot may be stale.
 */

import assert from "node:assert/strict";
import { planCountCopies, type PlannedDispatch } from "../../src/graph/count_plan.ts";

const page = { label: "page" } as GPUBuffer;
const other = { label: "other" } as GPUBuffer;

/** A dispatch binding `[buffer, offset, size]` ranges, with a copied count at `count` of `page` (or none). */
function dispatch(bindings: [GPUBuffer, number, number][], count: number | null): PlannedDispatch {
  return {
    buffers: bindings.map((b) => b[0]),
    offsets: bindings.map((b) => b[1]),
    sizes: bindings.map((b) => b[2]),
    indirect: count === null ? null : { buffer: page, offset: count, copy: true },
  };
}

Deno.test("planCountCopies() copies a count once for a run of launches that leave its bytes alone", () => {
  const plan = planCountCopies(Array.from({ length: 5 }, () => dispatch([[page, 256, 256]], 0)));
  assert.equal(plan.slots, 1);
  assert.deepEqual(plan.steps.map((s) => s?.copy), [true, false, false, false, false]);
  assert.deepEqual(plan.steps.map((s) => s?.slot), [0, 0, 0, 0, 0]);
});

Deno.test("planCountCopies() gives counts used in turn a slot each, copied once", () => {
  const plan = planCountCopies([0, 12, 0, 12, 24, 0].map((at) => dispatch([[page, 256, 64]], at)));
  assert.equal(plan.slots, 3);
  assert.deepEqual(plan.steps.map((s) => [s!.slot, s!.copy]), [
    [0, true],
    [1, true],
    [0, false],
    [1, false],
    [2, true],
    [0, false],
  ]);
});

Deno.test("planCountCopies() copies a count again after any dispatch whose bindings cover one of its 12 bytes", () => {
  const plan = planCountCopies([
    dispatch([[page, 256, 64]], 16), // copies
    dispatch([[page, 0, 4]], null), // ends before byte 16: the count stays
    dispatch([[page, 256, 64]], 16),
    dispatch([[page, 24, 4]], null), // covers byte 24..27, the count's last word
    dispatch([[page, 256, 64]], 16), // copies again
    dispatch([[other, 0, 1024]], null), // another buffer
    dispatch([[page, 0, 256]], 16), // reads the fresh copy, but its own bindings cover the count: the next copies
    dispatch([[page, 256, 64]], 16),
    dispatch([[page, 28, 4]], null), // starts right after the count
    dispatch([[page, 256, 64]], 16),
  ]);
  assert.deepEqual(plan.steps.map((s) => s?.copy ?? null), [
    true,
    null,
    false,
    null,
    true,
    null,
    false,
    true,
    null,
    false,
  ]);
});

Deno.test("planCountCopies() leaves static counts and counts read in place out of the plan", () => {
  const inPlace: PlannedDispatch = {
    ...dispatch([[page, 0, 64]], null),
    indirect: { buffer: other, offset: 0, copy: false },
  };
  const plan = planCountCopies([dispatch([[page, 0, 64]], null), inPlace]);
  assert.equal(plan.slots, 0);
  assert.deepEqual(plan.steps, [null, null]);
});

/**
 * `CountSlots`: which copied indirect counts a stream's indirect count buffer
 * still holds, slot by slot.
 */

import assert from "node:assert/strict";
import { COUNT_SLOTS, CountSlots } from "../../src/stream/count_slots.ts";

Deno.test("CountSlots spaces its slots by the storage offset alignment, at least 16 bytes, and sizes its buffer to fit", () => {
  assert.equal(new CountSlots(256).stride, 256);
  assert.equal(new CountSlots(4).stride, 16);
  assert.equal(new CountSlots(256).bufferSize, (COUNT_SLOTS - 1) * 256 + 16);
});

Deno.test("CountSlots.claim() takes the empty slots first, then each slot in turn", () => {
  const slots = new CountSlots(256);
  const taken: number[] = [];
  for (let i = 0; i < COUNT_SLOTS; i++) {
    const k = slots.claim();
    taken.push(k);
    slots.after(1, 12 * i, true, slots.valid); // kept, and it spares every other count
  }
  assert.deepEqual(taken, [...Array(COUNT_SLOTS).keys()]);
  assert.equal(slots.valid, (1 << COUNT_SLOTS) - 1);
  assert.deepEqual([slots.claim(), slots.claim(), slots.claim()], [0, 1, 2], "all full: in turn");
});

Deno.test("CountSlots.find() names the slot of a count kept there, and forgets it when a dispatch does not spare it", () => {
  const slots = new CountSlots(256);
  slots.claim();
  slots.after(7, 0, true, 0); // count (7, 0) in slot 0
  slots.claim();
  slots.after(7, 256, true, slots.valid); // count (7, 256) in slot 1; slot 0 spared
  assert.equal(slots.find(7, 0), 0);
  assert.equal(slots.find(7, 256), 1);
  assert.equal(slots.find(8, 0), -1, "another buffer");
  slots.placed = 1;
  slots.after(7, 256, true, 0); // a launch from (7, 256) whose bindings cover (7, 0)
  assert.equal(slots.find(7, 0), -1);
  assert.equal(slots.find(7, 256), 1);
  slots.placed = 1;
  slots.after(7, 256, false, slots.valid); // a launch that rewrites its own count
  assert.equal(slots.find(7, 256), -1);
  assert.equal(slots.valid, 0);
});

Deno.test("CountSlots.after() forgets a slot's tested bind group when the slot takes another count, not when it keeps its own", () => {
  const slots = new CountSlots(256);
  const group = { label: "bind group" } as GPUBindGroup;
  slots.claim();
  slots.after(7, 0, true, 0); // count (7, 0) in slot 0
  slots.groups[0] = group;
  slots.covers[0] = 0;
  slots.placed = 0;
  slots.after(7, 0, true, 0); // the same count again
  assert.equal(slots.groups[0], group);
  slots.valid = 0; // a static dispatch: the slot is forgotten, its count stays written
  slots.claim();
  slots.after(7, 0, true, 0); // the same count copied into it again
  assert.equal(slots.groups[0], group);
  slots.valid = 0;
  assert.equal(slots.claim(), 0);
  slots.after(7, 256, true, 0); // another count in slot 0
  assert.equal(slots.groups[0], null);
});

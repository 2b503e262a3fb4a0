/**
 * Contract under test: the command ring hands the reader every record in the
 * order written, with its words intact, across the ring's end; when it is
 * full the writer spills instead of blocking, asks for room, and the spilled
 * records come back in order; a sleeping reader is woken by the next record.
 * Writer and reader share one thread here: the ring does not care which
 * thread holds each side.
 */

import assert from "node:assert/strict";
import { allocateRing, RingWriter } from "../../src/worker/wire/command_ring.ts";
import { RingReader } from "../../src/worker/host/ring_reader.ts";
import { header, Op, opOf, SLOT_WORDS, slotsOf } from "../../src/worker/wire/ring_layout.ts";

/** Writes a launch-shaped record of `slots` slots whose words after the header are `seq * 1000 + i`. */
function put(w: RingWriter, seq: number, slots: number): void {
  const at = w.reserve(slots);
  w.u32[at] = header(Op.launch, slots);
  for (let i = 1; i < slots * SLOT_WORDS; i++) w.u32[at + i] = seq * 1000 + i;
  w.commit();
}

/**
 * Reads every available record, checking each one's words, and returns their
 * sequence numbers. The writer publishes at the end of its task (or every 32
 * slots): `flush` stands for that here, writer and reader sharing one thread.
 */
function take(r: RingReader, w: RingWriter): number[] {
  w.flush();
  const seen: number[] = [];
  while (r.available() > 0) {
    const at = r.at();
    const word = r.u32[at]!;
    if (opOf(word) === Op.pad) {
      r.advance(r.toEnd());
      continue;
    }
    const slots = slotsOf(word);
    const seq = Math.floor(r.u32[at + 1]! / 1000);
    for (let i = 1; i < slots * SLOT_WORDS; i++) assert.equal(r.u32[at + i], seq * 1000 + i, `record ${seq} word ${i}`);
    seen.push(seq);
    r.advance(slots);
  }
  return seen;
}

Deno.test("records of 1 to 5 slots come out in order with every word intact, across many wraps of the ring", () => {
  const buffers = allocateRing(64);
  const w = new RingWriter(buffers);
  const r = new RingReader(buffers);
  const got: number[] = [];
  let seq = 0;
  for (let round = 0; round < 200; round++) {
    for (let k = 0; k < 7; k++, seq++) put(w, seq, 1 + (seq % 5));
    got.push(...take(r, w));
  }
  assert.deepEqual(got, Array.from({ length: seq }, (_, i) => i));
  assert.equal(w.spillCount, 0, "the reader kept up: nothing spilled");
});

Deno.test("a full ring spills without blocking, asks for room once, and the spill comes back in order", () => {
  const buffers = allocateRing(64);
  const w = new RingWriter(buffers);
  const r = new RingReader(buffers);
  for (let seq = 0; seq < 500; seq++) put(w, seq, 1 + (seq % 3)); // ~1000 slots into a 64-slot ring
  assert.ok(w.spilled > 0, "records wait in the spill");
  assert.equal(r.takeSpaceRequest(), true, "the writer asked for a space message");
  assert.equal(r.takeSpaceRequest(), false, "once");
  const got: number[] = [];
  while (got.length < 500) {
    got.push(...take(r, w));
    w.drainSpill(); // what the writer does on the reader's `space` message
  }
  assert.deepEqual(got, Array.from({ length: 500 }, (_, i) => i));
  assert.equal(w.spilled, 0);
});

Deno.test("records written while older ones are spilled follow them, even once the ring has room", () => {
  const buffers = allocateRing(64);
  const w = new RingWriter(buffers);
  const r = new RingReader(buffers);
  for (let seq = 0; seq < 40; seq++) put(w, seq, 2); // 80 slots: 16 spill
  assert.ok(w.spilled > 0);
  const got = take(r, w); // the ring is empty now, the spill is not
  put(w, 40, 1); // moves the spill back first, then goes after it
  got.push(...take(r, w));
  assert.deepEqual(got, Array.from({ length: 41 }, (_, i) => i));
});

/** Resolves with "woke" when `p` does, or "timeout" after `ms` (a timer keeps the event loop turning meanwhile). */
async function within(p: Promise<void>, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((res) => {
    timer = setTimeout(() => res("timeout"), ms);
  });
  try {
    return await Promise.race([p.then(() => "woke"), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a reader waiting for records wakes when one is published", async () => {
  const buffers = allocateRing(64);
  const w = new RingWriter(buffers);
  const r = new RingReader(buffers);
  const woke = r.waitForRecords();
  assert.equal(await within(woke, 20), "timeout", "nothing was published yet");
  put(w, 1, 1);
  assert.equal(await within(woke, 5000), "woke");
  assert.deepEqual(take(r, w), [1]);
  put(w, 2, 1);
  assert.equal(await within(r.waitForRecords(), 5000), "woke", "a record is there already: at once");
  assert.deepEqual(take(r, w), [2]);
});

Deno.test("records are published every 32 slots, and the rest at the end of the task that wrote them", async () => {
  const buffers = allocateRing(256);
  const w = new RingWriter(buffers);
  const r = new RingReader(buffers);
  for (let seq = 0; seq < 10; seq++) put(w, seq, 1);
  assert.equal(r.available(), 0, "not yet: the writer's task goes on");
  await Promise.resolve();
  assert.equal(r.available(), 10);
  for (let seq = 10; seq < 50; seq++) put(w, seq, 1);
  assert.ok(r.available() >= 32, `${r.available()} slots published while the task still writes`);
  await Promise.resolve();
  assert.deepEqual(take(r, w), Array.from({ length: 50 }, (_, i) => i));
});

Deno.test("a ring whose size is not a power of two of at least 64 slots is refused", () => {
  for (const bad of [0, 32, 100, 1.5]) assert.throws(() => allocateRing(bad), RangeError);
});

/**
 * Regression, found by `bench/worker_cycles.ts` (a worker client hung in
 * `flush()` once in a few dozen start/destroy cycles): the worker's loop
 * marked itself stopped in a reaction to its own promise. When it stalled on
 * a record whose payload had not arrived, and that payload was handled
 * before the reaction ran (Deno handled the message first under load), the
 * loop still looked running, was not restarted, and the record waited
 * forever. The host here runs on the test's thread, so the payload can be
 * handed over in the same task as the stall, deterministically.
 */

import assert from "node:assert/strict";
import { allocateRing, RingWriter } from "../../src/worker/wire/command_ring.ts";
import type { WorkerMessage } from "../../src/worker/wire/protocol.ts";
import { Op } from "../../src/worker/wire/ring_layout.ts";
import { writeShortRecord } from "../../src/worker/link/ring_records.ts";
import { WorkerHost } from "../../src/worker/host/worker_host.ts";

Deno.test("a payload handed over in the same task as the loop's stall on it restarts the loop", async () => {
  const buffers = allocateRing(64);
  const ring = new RingWriter(buffers);
  const replies: number[] = [];
  let closed!: () => void;
  const ended = new Promise<void>((resolve) => (closed = resolve));
  const post = (m: WorkerMessage) => {
    if (m.type === "reply") replies.push(m.id);
  };
  const host = (await WorkerHost.start({ type: "init", options: {}, ring: buffers }, post, closed))!;
  writeShortRecord(ring, Op.call, 1); // payloads 1 and 2 are not there yet
  writeShortRecord(ring, Op.call, 2);
  ring.flush();
  await new Promise((resolve) => setTimeout(resolve, 50)); // the loop reads call 1 and stalls on it
  host.onPayload(1, { method: "stats" }); // runs call 1, then stalls on call 2 in this same task
  host.onPayload(2, { method: "stats" }); // must restart the loop
  for (let i = 0; i < 100 && replies.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(replies, [1, 2]);
  writeShortRecord(ring, Op.destroy);
  ring.flush();
  await ended;
});

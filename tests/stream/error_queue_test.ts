/**
 * Contract under test: a stream's error queue tracks checks that may still
 * queue errors, and `settle()` (which every draining call awaits) resolves
 * only once none is pending, including checks tracked while it waits. It
 * shares one promise per busy period, so flushing again and again without
 * yielding adds nothing that grows with the checks still pending.
 */

import assert from "node:assert/strict";
import { ErrorQueue } from "../../src/stream/error_queue.ts";

const queue = () => new ErrorQueue({ slot: 0, onDrain: () => {} });
/** Lets every ready callback run (a macrotask turn). */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("ErrorQueue.settle() resolves at once when no check is pending", async () => {
  let settled = false;
  queue().settle().then(() => (settled = true));
  await turn();
  assert.equal(settled, true);
});

Deno.test("ErrorQueue.settle() waits for every tracked check, including one tracked while it waits", async () => {
  const q = queue();
  const first = Promise.withResolvers<void>();
  const second = Promise.withResolvers<void>();
  q.track(first.promise);
  let settled = false;
  q.settle().then(() => (settled = true));
  q.track(second.promise);
  first.resolve();
  await turn();
  assert.equal(settled, false, "the check tracked after settle() began is still pending");
  second.resolve();
  await turn();
  assert.equal(settled, true);
});

Deno.test("ErrorQueue.settle() resolves after a rejected check, and errors the check queued are drained", async () => {
  const q = queue();
  const { LaunchError } = await import("../../mod.ts");
  const check = Promise.withResolvers<void>();
  q.track(
    check.promise.then(() => q.push(new LaunchError("unknown", "k", "k: failed"))).then(() => {
      throw new Error("a check that fails after queuing");
    }),
  );
  check.resolve();
  await q.settle();
  assert.equal(q.length, 1);
  assert.equal(q.drain()[0]!.message, "k: failed");
});

Deno.test("ErrorQueue.settle() hands every caller of one busy period the same promise", async () => {
  const q = queue();
  const check = Promise.withResolvers<void>();
  q.track(check.promise);
  const waits = Array.from({ length: 100 }, () => q.settle());
  assert.equal(new Set(waits).size, 1);
  check.resolve();
  await Promise.all(waits);
  q.track(Promise.resolve());
  assert.notEqual(q.settle(), waits[0], "a new busy period gets a new promise");
});

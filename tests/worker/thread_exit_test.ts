/**
 * Contract under test: `teardownInTurn()` (src/worker/wire/thread_exit.ts)
 * runs Worker teardowns one at a time, in the order they were queued, and a
 * teardown that fails ends its turn without stopping the ones after it. The
 * exit cases `destroyedTogetherTakeTurns` and `lostWhileOthersTearDown`
 * (`exit_status_test.ts`) check the same order with real Workers.
 */

import assert from "node:assert/strict";
import { teardownInTurn } from "../../src/worker/wire/thread_exit.ts";

const tick = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

Deno.test("teardownInTurn() starts each teardown once the one queued before it has ended", async () => {
  const log: string[] = [];
  const gate = Promise.withResolvers<void>();
  const a = teardownInTurn(async () => {
    log.push("a starts");
    await gate.promise;
    log.push("a ends");
  });
  const b = teardownInTurn(() => {
    log.push("b starts");
    return Promise.resolve();
  });
  await tick(20);
  assert.deepEqual(log, ["a starts"], "b started while a had not ended");
  gate.resolve();
  await Promise.all([a, b]);
  assert.deepEqual(log, ["a starts", "a ends", "b starts"]);
});

Deno.test("teardownInTurn(): a teardown that throws or rejects ends its turn, and the next one runs", async () => {
  const ran: string[] = [];
  const turns = [
    teardownInTurn(() => {
      throw new Error("thrown before it started");
    }),
    teardownInTurn(() => Promise.reject(new Error("rejected"))),
    teardownInTurn(() => {
      ran.push("third");
      return Promise.resolve();
    }),
  ];
  const settled = await Promise.allSettled(turns);
  assert.deepEqual(settled.map((s) => s.status), ["fulfilled", "fulfilled", "fulfilled"]);
  assert.deepEqual(ran, ["third"]);
});

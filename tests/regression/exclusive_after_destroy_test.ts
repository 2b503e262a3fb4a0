/**
 * Found by auditing calls after `destroy()`: `client.exclusive(fn)` (and
 * `dryRun(fn)`) still ran `fn` and resolved with its result, where every other
 * call of a destroyed client throws `DeviceLostError`; a section queued
 * behind one that destroyed the client ran too.
 */

import assert from "node:assert/strict";
import { createClient, DeviceLostError } from "../../mod.ts";

Deno.test("exclusive and dryRun on a destroyed client reject with DeviceLostError without running the section", async () => {
  const client = await createClient();
  client.destroy();
  let ran = 0;
  await assert.rejects(() => client.exclusive(() => ran++), DeviceLostError);
  await assert.rejects(() => client.dryRun(() => ran++), DeviceLostError);
  assert.equal(ran, 0);
  assert.equal(client.server.dryRun, false);
});

Deno.test("an exclusive section queued behind one that destroys the client rejects with DeviceLostError", async () => {
  const client = await createClient();
  let ran = false;
  const first = client.exclusive(async () => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    client.destroy();
  });
  const queued = client.exclusive(() => (ran = true));
  await first;
  await assert.rejects(() => queued, DeviceLostError);
  assert.equal(ran, false);
});

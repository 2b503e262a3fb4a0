/**
 * `createClient` refuses option keys it does not know with a `TypeError`
 * naming the key, before any device is requested: a misspelled option would
 * otherwise be ignored without a word by JavaScript callers.
 */

import assert from "node:assert/strict";
import { createClient } from "../../mod.ts";

Deno.test("createClient refuses a misspelled option, naming it, before requesting a device", async () => {
  const gpu = navigator.gpu;
  const requestAdapter = gpu.requestAdapter;
  let requested = 0;
  gpu.requestAdapter = (...args) => {
    requested++;
    return requestAdapter.apply(gpu, args);
  };
  try {
    await assert.rejects(
      createClient({ taskMax: 64 } as never),
      (e: unknown) =>
        e instanceof TypeError && /unknown option "taskMax"/.test(e.message) && /tasksMax/.test(e.message),
    );
    await assert.rejects(createClient(null as never), TypeError);
    assert.equal(requested, 0);
  } finally {
    gpu.requestAdapter = requestAdapter;
  }
});

Deno.test("createClient accepts every documented option", async () => {
  await using client = await createClient({ tasksMax: 64, maxStreams: 4, stream: 1, timing: "system" });
  assert.equal(client.stream, 1);
  assert.equal(client.server.settings.tasksMax, 64);
});

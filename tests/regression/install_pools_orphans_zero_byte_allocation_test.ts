/**
 * Regression: `installMemoryPools` refuses a new layout only when the current
 * pools hold live *bytes* (`MemoryManager.installPools` sums `bytesInUse`), so
 * it replaces the pools while zero-byte allocations are still live. Those
 * allocations vanish from `memoryUsage()` (`numberAllocs` drops to 0 while
 * their handles are alive), and the pages that served them are dropped with
 * the old pools: their `GPUBuffer`s are never destroyed, even after the handles
 * are released and memory is cleaned up (a leak).
 *
 * Found by the model test (tests/model, seed 1023 at 3000 steps: numberAllocs
 * 35 where the model had 36 live allocations).
 */

import assert from "node:assert/strict";
import { InstallMemoryPoolsError } from "../../mod.ts";
import { withClient } from "../_gpu.ts";

Deno.test("installMemoryPools with a live zero-byte allocation keeps it accounted and frees its buffer later", async () => {
  await withClient(async (client) => {
    const z = client.empty(0);
    assert.equal(client.memoryUsage().numberAllocs, 1);
    try {
      client.installMemoryPools("exclusive-pages");
    } catch (e) {
      assert.ok(e instanceof InstallMemoryPoolsError, String(e)); // refusing is fine
    }
    assert.equal(client.memoryUsage().numberAllocs, 1, "the live allocation is still accounted");
    z.release();
    client.memoryCleanup();
    await client.sync();
    assert.equal(client.memoryUsage().numberAllocs, 0);
    assert.equal(client.server.stream(0).storage.liveBuffers, 0, "no GPUBuffer is left behind");
  });
});

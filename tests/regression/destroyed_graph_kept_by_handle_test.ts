/**
 * Found by the graph-lifetime audit: a `Graph` handle caches the server's
 * captured graph (its tasks, bind groups and stream) for the replay fast path,
 * and kept that cache after `destroy()`. The GPU memory was freed, but every
 * destroyed graph's JavaScript side lived on for as long as its handle did,
 * so a program that keeps its handles (in a list of layers, say) grew with
 * every graph it ever made. `destroy()` now drops the cache.
 */

import assert from "node:assert/strict";
import { macrotask, plusOneKernel, readF32, withClient } from "../_gpu.ts";

Deno.test("a destroyed graph's captured dispatches are not kept alive by its handle", async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  assert.ok(gc, "run with --v8-flags=--expose-gc (deno task test does)");
  await withClient(async (client) => {
    const input = client.create(new Float32Array([1, 2, 3, 4]));
    const output = client.empty(16);
    const graph = await client.capture(() => client.launch(plusOneKernel, [1], [input, output]));
    graph.replay(); // the handle resolves and caches the captured graph
    assert.deepEqual([...await readF32(client, output)], [2, 3, 4, 5]);
    const captured = new WeakRef(client.server.capturedGraph(graph.id)!.graph);
    graph.destroy();
    await client.sync();
    for (let i = 0; i < 10 && captured.deref() !== undefined; i++) {
      await macrotask();
      gc!();
    }
    assert.equal(captured.deref(), undefined, "the captured graph was collected while its handle lives");
    assert.equal(graph.destroyed, true); // the handle itself is still here
    graph.replay(); // queues an error, as for any destroyed graph
    await assert.rejects(client.flush());
  });
});

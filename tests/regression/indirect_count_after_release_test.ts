/**
 * Regression: an indirect launch whose workgroup counts live in memory owned
 * by another stream does not pin that memory (only the kernel's bindings are
 * pinned, in `Stream.resolveBindings`). When the count handle is released and
 * `memoryCleanup()` runs before the launching stream submits, the owner stream
 * (idle) destroys the page at once; the launching stream then submits a
 * dispatch that reads its counts from a destroyed `GPUBuffer`, the whole batch
 * fails validation ("In a dispatch command, indirect:true: Buffer with 'stream
 * 0 main pool 1 sliced page 0' label has been destroyed"), and every launch of
 * that batch is lost.
 *
 * Found by the model test (tests/model, seed 609 at 3000 steps).
 */

import assert from "node:assert/strict";
import { incKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("an indirect launch counted by another stream's memory runs even if the count handle is released", async () => {
  await withClient(async (client) => {
    const launcher = client.onStream(1);
    const x = launcher.create(new Uint32Array([0, 0, 0, 0]));
    launcher.launch(incKernel, [1], [x]); // compile inc first: x = 1
    await launcher.sync();
    const counts = client.create(new Uint32Array([1, 1, 1])); // owned by stream 0
    await client.sync();
    launcher.launch(incKernel, [1], [x]); // x = 2, same batch
    launcher.launch(incKernel, counts, [x]); // x = 3, counts read from stream 0's memory
    counts.release();
    client.memoryCleanup(); // stream 0's page is fully free and stream 0 is idle
    assert.deepEqual([...await readU32(launcher, x)], [3, 3, 3, 3]);
  });
});

/**
 * Regression: a write issued on a stream that holds work behind a new
 * kernel's first launch is held with the `GPUBuffer` it targets, but it does
 * not keep the memory alive. When the handle is released and
 * `memoryCleanup()` runs before the held work is released, the owner stream
 * (another stream, idle) destroys the page at once; the held write then
 * reaches `queue.writeBuffer` with a destroyed buffer, and the writing
 * stream's next sync/flush/read rejects with `DeviceValidationError`
 * "Buffer with 'stream 0 main pool 1 sliced page 0' label has been destroyed",
 * although every call was valid. (Reads and launches pin the memory they use
 * until their submission completes; held writes do not.)
 *
 * Found by the model test (tests/model, seed 601 at 3000 steps).
 */

import assert from "node:assert/strict";
import { addConstKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("a held write into another stream's memory, then release and memoryCleanup, leaves no error", async () => {
  await withClient(async (client) => {
    const writer = client.onStream(1);
    const x = client.create(new Uint32Array([1, 2, 3, 4])); // owned by stream 0
    const y = writer.create(new Uint32Array(4));
    await client.sync();
    await writer.sync();
    writer.launch(addConstKernel(7), [1], [y]); // a new pipeline: stream 1 holds what follows
    writer.write(x, new Uint32Array([9, 9, 9, 9])); // held on stream 1
    x.release();
    client.memoryCleanup(); // stream 0's page is fully free and stream 0 is idle
    await writer.sync(); // must not reject
    assert.deepEqual([...await readU32(writer, y)], [7, 7, 7, 7]);
  });
});

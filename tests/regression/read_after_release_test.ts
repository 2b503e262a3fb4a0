/**
 * Regression: a read requested on one stream of memory owned by another
 * stream does not keep that memory alive. When the handle is released and
 * `memoryCleanup()` runs before the read's copy is submitted, the owner
 * stream's page is destroyed at once (the owner stream is idle), the reading
 * stream then submits a copy from a destroyed `GPUBuffer`, and the read
 * rejects with `ServerUnhealthyError` (`DeviceValidationError` "Buffer with
 * 'stream 0 main pool 1 sliced page 0' label has been destroyed") instead of
 * returning the bytes the memory held when the read was requested.
 *
 * `memoryCleanup()` submits and cleans each stream in id order, so the owner
 * (stream 0) is cleaned before the reader (stream 1) is submitted. Launches
 * that bind memory of another stream pin it until their submission completes;
 * reads do not.
 *
 * Found with the model test (deferred reads + release + memoryCleanup).
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

Deno.test("a read on another stream returns the bytes even if the handle is released and memory cleaned up", async () => {
  await withClient(async (client) => {
    const reader = client.onStream(1);
    const x = client.create(new Uint32Array([1, 2, 3, 4]));
    await client.sync();
    const pending = reader.read(x); // the copy is encoded on stream 1, not yet submitted
    x.release();
    client.memoryCleanup(); // stream 0's page is fully free: destroyed at once
    const bytes = await pending;
    assert.deepEqual([...new Uint32Array(bytes.buffer, bytes.byteOffset, 4)], [1, 2, 3, 4]);
  });
});

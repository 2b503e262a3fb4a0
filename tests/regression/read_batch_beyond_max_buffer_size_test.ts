/**
 * Regression: a read copies all of its ranges into one staging buffer, sized
 * to their sum. When the ranges of one `readMany` add up to more than the
 * device's `maxBufferSize` (each range fits on its own), the staging buffer is
 * invalid: the command buffer holding its copies fails validation, which also
 * drops every launch encoded before the read in that batch, and the read
 * rejects with a `DeviceLostError` although the device is fine. CubeCL gives
 * each resource of a read its own staging slice (cubecl-semantics 2.4).
 *
 * Uses a device requested with the default limits (`maxBufferSize` 256 MiB,
 * `maxStorageBufferBindingSize` 128 MiB): three 90 MiB allocations.
 */

import assert from "node:assert/strict";
import { createClient } from "../../mod.ts";
import { incKernel } from "../_gpu.ts";

Deno.test("a readMany whose ranges add up to more than maxBufferSize returns every range and keeps the launches before it", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  assert.ok(adapter !== null);
  const device = await adapter.requestDevice(); // default limits
  const MiB = 1024 * 1024;
  const words = (90 * MiB) / 4;
  assert.ok(3 * words * 4 > device.limits.maxBufferSize && words * 4 <= device.limits.maxStorageBufferBindingSize);
  const client = await createClient({ device });
  try {
    const small = client.create(new Uint32Array(64).fill(1));
    client.launch(incKernel, [1], [small]);
    await client.sync(); // the kernel is compiled: the next launch is not held
    const big = [7, 8, 9].map((k) => {
      const host = new Uint32Array(words);
      host[0] = k;
      host[words - 1] = k + 100;
      return client.create(host);
    });
    client.launch(incKernel, [1], [small]); // in the batch that the read's copies join
    const got = await client.readMany(big);
    got.forEach((bytes, i) => {
      assert.equal(bytes.byteLength, words * 4);
      const view = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
      assert.equal(view[0], 7 + i);
      assert.equal(view[words - 1], 107 + i);
    });
    const s = await client.read(small);
    assert.deepEqual([...new Uint32Array(s.buffer, s.byteOffset, 64)], new Array(64).fill(3));
    await client.flush();
  } finally {
    client.destroy();
    device.destroy();
  }
});

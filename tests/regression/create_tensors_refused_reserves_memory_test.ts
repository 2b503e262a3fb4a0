/**
 * Regression: `createTensors` allocated the group's reservation (and so could
 * create a `GPUBuffer` page) before it compared each entry's byte length with
 * its shape. A call refused with `RangeError` for a mismatched length released
 * its handles, but the pool had already grown: a refused call changed the
 * memory state (`bytesReserved` went from 0 to a whole page). The lengths are
 * now checked against the layout plan before anything is allocated.
 *
 * Found by reading `ComputeClient.createTensors` (src/client/compute_client.ts).
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

Deno.test("createTensors refused for a mismatched data length reserves no device memory", async () => {
  await withClient((client) => {
    const before = client.memoryUsage();
    assert.throws(
      () =>
        client.createTensors([
          { descriptor: { shape: [4], elemSize: 4 }, data: new Float32Array([1, 2, 3, 4]) },
          { descriptor: { shape: [1024, 1024], elemSize: 4 }, data: new Uint8Array(4) },
        ]),
      (e: unknown) => e instanceof RangeError && /createTensors\[1\]/.test(e.message),
    );
    assert.deepEqual(client.memoryUsage(), before);
    assert.equal(before.bytesReserved, 0);
  });
});

Deno.test("createTensors refused for a mismatched data length leaves a lent staging view usable", async () => {
  await withClient(async (client) => {
    const [view] = client.staging([8]);
    view!.set([1, 2, 3, 4, 5, 6, 7, 8]);
    assert.throws(() => client.createTensors([{ descriptor: { shape: [3], elemSize: 4 }, data: view! }]), RangeError);
    assert.equal(view!.byteLength, 8);
    const [t] = client.createTensors([{ descriptor: { shape: [2], elemSize: 4 }, data: view! }]);
    assert.deepEqual([...await client.readTensor(t!)], [1, 2, 3, 4, 5, 6, 7, 8]);
    t!.handle.release();
  });
});

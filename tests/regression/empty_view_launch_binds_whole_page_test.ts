/**
 * Regression: launching a kernel on a zero-byte view binds the whole rest of
 * the view's `GPUBuffer`. The bind group cache (and graph recording) turn a
 * binding size of 0 into "rest of the buffer" (WebGPU refuses size 0), so for
 * a view inside a sliced page, `arrayLength` is the size of the rest of the
 * page (megabytes) and the kernel writes into every allocation after it,
 * including ones the launch never named. Expected: the kernel sees an empty
 * array (a no-op for a bounds-checked kernel), or the launch is refused.
 *
 * Found with the model test (views of length 0 passed to `inc`).
 */

import assert from "node:assert/strict";
import { incKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("inc on a zero-byte view changes no memory", async () => {
  await withClient(async (client) => {
    const a = client.create(new Uint32Array([1, 2, 3, 4]));
    const b = client.create(new Uint32Array([10, 20, 30, 40])); // another allocation, same page
    const empty = a.view(0, 16); // 0 bytes at the start of a
    assert.equal(empty.sizeInUse, 0);
    try {
      client.launch(incKernel, [1], [empty]);
    } catch (e) {
      assert.ok(e instanceof RangeError || e instanceof TypeError, `refusing is fine, but with a clear error: ${e}`);
    }
    assert.deepEqual([...await readU32(client, a)], [1, 2, 3, 4]);
    assert.deepEqual([...await readU32(client, b)], [10, 20, 30, 40]);
  });
});

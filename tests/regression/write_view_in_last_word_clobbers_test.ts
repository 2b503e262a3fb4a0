/**
 * Regression: a write into a view whose end is not a multiple of 4 is merged
 * into its last word on the device only when that whole word fits inside the
 * allocation (`end + (4 - end % 4) <= size` in `WebGpuServer.write`). For an
 * allocation whose size is not a multiple of 4, a view ending in the
 * allocation's last, partial word takes the padded path instead, and the
 * bytes between the view's end and the allocation's end are overwritten with
 * zeros.
 *
 * Found by the model test (tests/model, seed 404 at 3000 steps).
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

Deno.test("a write into a view ending inside the last word of an 11-byte allocation keeps the byte after it", async () => {
  await withClient(async (client) => {
    const parent = client.create(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]));
    const view = parent.view(8, 1); // bytes 8..9; byte 10 follows it in the same allocation
    assert.equal(view.sizeInUse, 2);
    client.write(view, new Uint8Array([0xaa, 0xbb]));
    assert.deepEqual([...await client.read(parent)], [1, 2, 3, 4, 5, 6, 7, 8, 0xaa, 0xbb, 11]);
  });
});

Deno.test("a write into a 1-byte view at the start of a 3-byte allocation keeps the other two bytes", async () => {
  await withClient(async (client) => {
    const parent = client.create(new Uint8Array([1, 2, 3]));
    const view = parent.view(0, 2);
    client.write(view, new Uint8Array([9]));
    assert.deepEqual([...await client.read(parent)], [9, 2, 3]);
  });
});

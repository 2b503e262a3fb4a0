/**
 * Regression: `write` into a view whose byte length is not a multiple of 4
 * pads the upload to 4 bytes with zeros, so it overwrites up to 3 bytes that
 * follow the view inside the same allocation (bytes the view does not own).
 *
 * Found by the model test (tests/model, seed 1).
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

Deno.test("write into a 1-byte view leaves the following bytes of the allocation unchanged", async () => {
  await withClient(async (client) => {
    const parent = client.create(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    const view = parent.view(0, 7); // byte 0 only
    assert.equal(view.sizeInUse, 1);
    client.write(view, new Uint8Array([9]));
    assert.deepEqual([...await client.read(parent)], [9, 2, 3, 4, 5, 6, 7, 8]);
    view.release();
    parent.release();
  });
});

Deno.test("write into a 5-byte view in the middle of an allocation touches only those 5 bytes", async () => {
  await withClient(async (client) => {
    const parent = client.create(new Uint8Array(16).fill(0xaa));
    const view = parent.view(4, 7); // bytes 4..8
    assert.equal(view.sizeInUse, 5);
    client.write(view, new Uint8Array(5).fill(0x11));
    const want = new Uint8Array(16).fill(0xaa).fill(0x11, 4, 9);
    assert.deepEqual([...await client.read(parent)], [...want]);
    view.release();
    parent.release();
  });
});

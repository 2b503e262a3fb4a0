/**
 * Found by the client audit: a read whose size is not a multiple of 4 copies
 * its range rounded up to a whole word (mapped ranges are word-sized), and
 * returned a `Uint8Array` of the right length over that rounded buffer. So
 * `result.buffer` held up to 3 bytes the read did not ask for (bytes of the
 * parent outside a view), and `new Float32Array(result.buffer)` or
 * `result.buffer.byteLength` saw them. The result's buffer is now exactly the
 * bytes read; sizes that are whole words still take no extra copy.
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

Deno.test("a read of a view whose size is not a whole word returns a buffer of exactly its bytes", async () => {
  await withClient(async (client) => {
    const parent = client.create(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    const view = parent.view(0, 3); // bytes 0..4
    const got = await client.read(view);
    assert.deepEqual([...got], [1, 2, 3, 4, 5]);
    assert.equal(got.byteOffset, 0);
    assert.equal(got.buffer.byteLength, 5, "no byte outside the view comes back");
    const whole = await client.read(parent);
    assert.equal(whole.buffer.byteLength, 8);
    assert.deepEqual([...whole], [1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

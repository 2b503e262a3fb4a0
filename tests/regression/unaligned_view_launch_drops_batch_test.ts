/**
 * Regression: a view whose front offset is a multiple of 4 (all `Handle.view`
 * asks for) but not of the device's `minStorageBufferOffsetAlignment` (32 on
 * the software adapter) is accepted by `launch`, and the bind group built for
 * it is invalid. The error only surfaces at the next flush/read, as several
 * `DeviceValidationError`s ("BindGroup ... is invalid"), and the whole
 * submitted batch is lost: valid launches queued before it in the same batch
 * silently never run. Expected: `launch` refuses the view at once (like other
 * bad arguments), or the launch works; either way unrelated work must run.
 *
 * Found while writing the model test (views in launches).
 */

import assert from "node:assert/strict";
import { incKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("a launch on a view at an unaligned offset does not drop the valid launches batched with it", async () => {
  await withClient(async (client) => {
    const a = client.create(new Uint32Array([1, 2, 3, 4]));
    const b = client.create(new Uint32Array([10, 20, 30, 40]));
    const tail = b.view(4, 0); // bytes 4..16 of b: offset 4 is not a multiple of 32
    await client.sync();
    client.launch(incKernel, [1], [a]); // valid, same batch
    let refused = false;
    try {
      client.launch(incKernel, [1], [tail]);
    } catch (e) {
      refused = true;
      assert.ok(e instanceof RangeError || e instanceof TypeError, `a clear error: ${e}`);
    }
    // A queued error is acceptable (drain it); losing the valid work is not.
    await client.flush().catch(() => {});
    await client.sync().catch(() => {});
    assert.deepEqual([...await readU32(client, a)], [2, 3, 4, 5], "the valid launch ran");
    const gotB = [...await readU32(client, b)];
    assert.deepEqual(gotB, refused ? [10, 20, 30, 40] : [10, 21, 31, 41]);
  });
});

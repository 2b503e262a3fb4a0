/**
 * Found by the stream audit: server-level `read` and `write` looked their
 * stream up (building it on first use: memory manager, info arena, profiler)
 * before checking their arguments, so a refused call on a stream not used yet
 * left that stream built. They now check every argument first.
 */

import assert from "node:assert/strict";
import { bytes, withClient } from "../_gpu.ts";

Deno.test("a server read or write refused for its arguments builds no stream", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array([1, 2, 3, 4]));
    assert.deepEqual(client.server.streamIds(), [0]);
    const tooLong = { binding: x, shape: [8], strides: [1], elemSize: 4 }; // 32 B of a 16 B handle
    await assert.rejects(client.server.read([tooLong], 5), RangeError);
    assert.throws(() => client.server.write([[tooLong, bytes(new Uint32Array(8))]], 6), RangeError);
    assert.deepEqual(client.server.streamIds(), [0], "streams 5 and 6 were not built");
    const fine = { binding: x, shape: [4], strides: [1], elemSize: 4 };
    assert.deepEqual([...new Uint32Array((await client.server.read([fine], 5))[0]!.buffer)], [1, 2, 3, 4]);
    assert.deepEqual(client.server.streamIds(), [0, 5], "a read that passes its checks builds its stream");
  });
});

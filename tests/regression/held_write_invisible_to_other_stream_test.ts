/**
 * Regression: a write issued on a stream that is holding work behind a new
 * kernel's first launch is held too (queued in the stream's speculation), but
 * it does not mark the page it writes as used by that stream. Another stream
 * that then reads (or launches on) the memory does not submit the holding
 * stream first, so its work runs before the held write reaches the queue and
 * sees the old bytes, although the write was issued first ("visible to all
 * later work").
 *
 * Found by the model test (tests/model, seed 409 at 3000 steps).
 */

import assert from "node:assert/strict";
import { addConstKernel, incKernel, readU32, withClient } from "../_gpu.ts";

Deno.test("a write held behind a new kernel on one stream is seen by a read on another stream", async () => {
  await withClient(async (client) => {
    const writer = client.onStream(1);
    const reader = client.onStream(2);
    const x = client.create(new Uint32Array([1, 2, 3, 4]));
    const y = writer.create(new Uint32Array(4));
    await client.sync();
    await writer.sync();
    writer.launch(addConstKernel(5), [1], [y]); // a new pipeline: stream 1 holds what follows
    writer.write(x, new Uint32Array([9, 9, 9, 9])); // held on stream 1
    assert.deepEqual([...await readU32(reader, x)], [9, 9, 9, 9]);
    assert.deepEqual([...await readU32(writer, y)], [5, 5, 5, 5]);
  });
});

Deno.test("a write held behind a new kernel on one stream is seen by a launch on another stream", async () => {
  await withClient(async (client) => {
    const writer = client.onStream(1);
    const consumer = client.onStream(2);
    const x = client.create(new Uint32Array([1, 2, 3, 4]));
    const y = writer.create(new Uint32Array(4));
    consumer.launch(incKernel, [1], [y]); // compile inc first
    await consumer.sync();
    await client.sync();
    writer.launch(addConstKernel(6), [1], [y]); // stream 1 holds what follows
    writer.write(x, new Uint32Array([9, 9, 9, 9])); // held on stream 1
    consumer.launch(incKernel, [1], [x]); // must run after the write
    assert.deepEqual([...await readU32(consumer, x)], [10, 10, 10, 10]);
  });
});

/**
 * Regression: writing a lent staging view hands its buffer back to the pool
 * and detaches the view. Passing that view again was taken as zero bytes:
 * `create(view)` silently returned a 0-byte handle instead of the data, and
 * `write` into a 0-byte handle succeeded, doing nothing; a detached
 * `ArrayBuffer` reached the `Uint8Array` constructor and threw its raw
 * "Cannot perform Construct on a detached ArrayBuffer". Host data over a
 * detached buffer is now refused with a `TypeError` naming the call, before
 * anything is allocated.
 *
 * Found by reading `toBytes` (src/client/client_types.ts) and
 * `HostStagingPool.recycle` (src/memory/host_staging.ts).
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";

const detached = (call: string) => (e: unknown) =>
  e instanceof TypeError && e.message.startsWith(`${call}:`) && /detached/.test(e.message);

Deno.test("create with a staging view already handed back throws a TypeError instead of making an empty handle", async () => {
  await withClient(async (client) => {
    const [view] = client.staging([8]);
    view!.set([1, 2, 3, 4, 5, 6, 7, 8]);
    const first = client.create(view!); // hands the buffer back
    const before = client.memoryUsage();
    assert.throws(() => client.create(view!), detached("create"));
    assert.deepEqual(client.memoryUsage(), before);
    assert.deepEqual([...await client.read(first)], [1, 2, 3, 4, 5, 6, 7, 8]);
    first.release();
  });
});

Deno.test("write of a staging view already handed back throws a TypeError, even into a zero-size handle", async () => {
  await withClient(async (client) => {
    const [view] = client.staging([0]);
    const target = client.empty(0);
    client.write(target, view!); // hands the buffer back
    assert.throws(() => client.write(target, view!), detached("write"));
    const [again] = client.staging([4]);
    again!.set([5, 6, 7, 8]);
    const h = client.create(new Uint8Array([9, 9, 9, 9]));
    client.write(h, again!);
    assert.throws(() => client.write(h, again!), detached("write"));
    assert.deepEqual([...await client.read(h)], [5, 6, 7, 8]);
  });
});

Deno.test("create and createTensors with a detached ArrayBuffer throw a TypeError naming the call", async () => {
  await withClient((client) => {
    const buffer = new ArrayBuffer(8);
    const floats = new Float32Array(buffer);
    buffer.transfer();
    assert.throws(() => client.create(buffer), detached("create"));
    assert.throws(
      () => client.createTensors([{ descriptor: { shape: [0], elemSize: 4 }, data: floats }]),
      detached("createTensors[0]"),
    );
  });
});

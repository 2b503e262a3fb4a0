/**
 * Regression: the tensor calls of the client let bad arguments reach code
 * that was not checking them, so the errors did not name the call or the
 * argument. `createTensors(5)` threw a raw "entries.map is not a function",
 * `createTensors([null])` and `emptyTensors([null])` "Cannot read properties
 * of null"; a group whose byte size is above `maxBufferSize` or
 * `Number.MAX_SAFE_INTEGER` was refused as `empty: size must be a non-negative
 * integer number of bytes, got 4611686018427388000` (a call the user never
 * made, and a size that is an integer); an unknown `strategy` was accepted
 * silently; and `readTensor` of a tensor without strides was refused as
 * `read[0]: expected a CopyDescriptor`. Each is now a `TypeError`,
 * `RangeError` or `ResourceLimitError` naming the call and the entry, thrown
 * before anything is allocated.
 *
 * Found by reading `ComputeClient.emptyTensors`/`createTensors`/`readTensor`
 * (src/client/compute_client.ts).
 */

import assert from "node:assert/strict";
import { ResourceLimitError } from "../../mod.ts";
import { withClient } from "../_gpu.ts";

const named = (type: new (...a: never[]) => Error, prefix: string) => (e: unknown) =>
  e instanceof type && e.message.startsWith(prefix);

Deno.test("createTensors and emptyTensors refuse entries that are not objects with a TypeError naming the entry", async () => {
  await withClient((client) => {
    const before = client.memoryUsage();
    assert.throws(() => client.createTensors(5 as never), named(TypeError, "createTensors: "));
    assert.throws(() => client.createTensors([null as never]), named(TypeError, "createTensors[0]: "));
    const ok = { descriptor: { shape: [1], elemSize: 4 }, data: new Float32Array(1) };
    assert.throws(
      () => client.createTensors([ok, { data: new Float32Array(1) } as never]),
      named(TypeError, "createTensors[1]: "),
    );
    assert.throws(
      () => client.emptyTensors([{ shape: [1], elemSize: 4 }, null as never]),
      named(TypeError, "emptyTensors[1]: "),
    );
    assert.deepEqual(client.memoryUsage(), before);
  });
});

Deno.test("emptyTensors refuses a group above maxBufferSize with a ResourceLimitError naming emptyTensors", async () => {
  await withClient((client) => {
    const max = client.properties.memory.maxBufferSize;
    const huge = [
      [{ shape: [2 ** 30, 2 ** 30], elemSize: 4 }], // 2^62 B: beyond Number.MAX_SAFE_INTEGER
      [{ shape: [2 ** 52], elemSize: 4 }],
      [{ shape: [max], elemSize: 1 }, { shape: [1], elemSize: 1 }], // each fits, the group does not
    ];
    for (const descriptors of huge) {
      assert.throws(
        () => client.emptyTensors(descriptors),
        (e: unknown) =>
          (e instanceof ResourceLimitError && e.message.startsWith("emptyTensors")) ||
          (e instanceof RangeError && e.message.startsWith("emptyTensors[0]: ")),
      );
    }
    assert.throws(
      () => client.createTensors([{ descriptor: { shape: [2 ** 40], elemSize: 8 }, data: new Uint8Array(0) }]),
      (e: unknown) => e instanceof Error && e.message.startsWith("createTensors"),
    );
    assert.equal(client.memoryUsage().bytesReserved, 0);
  });
});

Deno.test("emptyTensors refuses an unknown layout strategy with a TypeError", async () => {
  await withClient((client) => {
    assert.throws(
      () => client.emptyTensors([{ shape: [4], elemSize: 4, strategy: "pitched" as never }]),
      named(TypeError, "emptyTensors[0]: "),
    );
    const [t] = client.emptyTensors([{ shape: [2, 2], elemSize: 4, strategy: "optimized" }]);
    assert.deepEqual(t!.strides, [2, 1]); // optimized is contiguous on WebGPU
    t!.handle.release();
  });
});

Deno.test("readTensor of a malformed tensor rejects with an error naming readTensor", async () => {
  await withClient(async (client) => {
    const h = client.create(new Float32Array([1, 2, 3, 4]));
    await assert.rejects(
      client.readTensor({ handle: h, shape: [4], elemSize: 4 } as never),
      named(TypeError, "readTensor: "),
    );
    await assert.rejects(
      client.readTensor({ handle: h, shape: [8], strides: [1], elemSize: 4 }),
      named(RangeError, "readTensor: "),
    );
    const bytes = await client.readTensor({ handle: h, shape: [2, 2], strides: [2, 1], elemSize: 4 });
    assert.deepEqual([...new Float32Array(bytes.buffer, bytes.byteOffset, 4)], [1, 2, 3, 4]);
    h.release();
  });
});

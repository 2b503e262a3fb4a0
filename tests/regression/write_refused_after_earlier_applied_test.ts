/**
 * Regression: `server.write` with several descriptors checked the shapes and
 * byte lengths of all of them first, but the stream id of each binding only
 * while applying them, so a later descriptor's invalid stream id threw
 * `RangeError` after the earlier descriptors had been written. A binding that
 * was not a binding (no `ManagedMemory`, a negative or fractional offset, a
 * front offset off the 4-byte grid) also got past the checks: it threw a raw
 * `TypeError` from inside the check, or reached the device and was queued as
 * a `DeviceValidationError` by WebGPU. Every argument is now checked before
 * anything is written, so a refused call changes nothing.
 *
 * Found by reading `HostTransfers.write` (src/server/host_transfers.ts).
 */

import assert from "node:assert/strict";
import type { BufferBinding, CopyDescriptor } from "../../server.ts";
import type { Handle } from "../../mod.ts";
import { bytes, readU32, withClient } from "../_gpu.ts";

/** A descriptor over the bytes `h`'s binding, changed by `patch`, has in view. */
function descriptor(h: Handle, patch: Record<string, unknown> = {}): CopyDescriptor {
  const binding = {
    memory: h.memory,
    offsetStart: h.offsetStart,
    offsetEnd: h.offsetEnd,
    stream: h.stream,
    size: h.size,
    ...patch,
  } as unknown as BufferBinding;
  const inView = binding.size - binding.offsetStart - binding.offsetEnd;
  return { binding, shape: [Number.isSafeInteger(inView) ? inView : h.sizeInUse], strides: [1], elemSize: 1 };
}

const BAD: [string, Record<string, unknown>, ErrorConstructor, RegExp][] = [
  ["a negative stream id", { stream: -1 }, RangeError, /write\[1\]: stream id must be a non-negative safe integer/],
  ["a fractional stream id", { stream: 0.5 }, RangeError, /write\[1\]: stream id/],
  ["a stream id that is a string", { stream: "0" }, RangeError, /write\[1\]: stream id/],
  ["memory that is not a ManagedMemory", { memory: {} }, TypeError, /write\[1\]: .*ManagedMemory/],
  ["a negative front offset", { offsetStart: -4 }, RangeError, /write\[1\]: offsetStart/],
  ["a front offset off the 4-byte grid", { offsetStart: 2 }, RangeError, /write\[1\]: offsetStart .*multiple of 4/],
];

for (const [what, patch, type, message] of BAD) {
  Deno.test(`server.write refusing a later descriptor with ${what} writes none of the earlier ones`, async () => {
    await withClient(async (client) => {
      const a = client.create(new Uint32Array([1, 2, 3, 4]));
      const b = client.create(new Uint32Array([5, 6, 7, 8]));
      await client.sync();
      const bad = descriptor(b, patch);
      const writes: [CopyDescriptor, Uint8Array][] = [
        [descriptor(a), bytes(new Uint32Array([10, 20, 30, 40]))],
        [bad, new Uint8Array(bad.shape[0]!).fill(0xee)],
      ];
      let thrown: unknown = null;
      try {
        client.server.write(writes, 0);
      } catch (e) {
        thrown = e;
      }
      await client.flush(); // the refused call queued nothing
      assert.deepEqual([...await readU32(client, a)], [1, 2, 3, 4], "the earlier descriptor was not written");
      assert.deepEqual([...await readU32(client, b)], [5, 6, 7, 8]);
      assert.ok(thrown instanceof type, `expected ${type.name}, got ${String(thrown)}`);
      assert.match((thrown as Error).message, message);
      // The runtime is usable: the same writes, corrected, land.
      client.server.write([writes[0]!, [descriptor(b), bytes(new Uint32Array([50, 60, 70, 80]))]], 0);
      assert.deepEqual([...await readU32(client, a)], [10, 20, 30, 40]);
      assert.deepEqual([...await readU32(client, b)], [50, 60, 70, 80]);
    });
  });
}

Deno.test("server.write refusing a later descriptor's byte length writes none of the earlier ones", async () => {
  await withClient(async (client) => {
    const a = client.create(new Uint32Array([1, 2, 3, 4]));
    const b = client.create(new Uint32Array([5, 6, 7, 8]));
    assert.throws(
      () =>
        client.server.write([
          [descriptor(a), bytes(new Uint32Array([10, 20, 30, 40]))],
          [descriptor(b), new Uint8Array(12)],
        ], 0),
      /write\[1\]: 12 B given for a descriptor of 16 B/,
    );
    await client.flush();
    assert.deepEqual([...await readU32(client, a)], [1, 2, 3, 4]);
    assert.deepEqual([...await readU32(client, b)], [5, 6, 7, 8]);
  });
});

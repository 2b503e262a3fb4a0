/**
 * Regression: `server.read`, `server.write` and `server.getResource` took
 * memory of another server (a handle of another client, or a binding built
 * from its memory) without a word. The client refuses such a handle
 * (`checkHandle`), but the server resolved the binding wherever its memory
 * lived, so the copy or `writeBuffer` reached a buffer of another device:
 * WebGPU refused it as a validation error on the calling device, which
 * failed the read (and every launch submitted with its copy), left the write
 * undone behind an error queued for a later call, and handed out the other
 * device's buffer. They now refuse it at once with a `TypeError` naming the
 * call and the memory, before anything is queued.
 *
 * Found by reading `HostTransfers` (src/server/host_transfers.ts).
 */

import assert from "node:assert/strict";
import type { BufferBinding } from "../../server.ts";
import { type ComputeClient, createClient, type Handle } from "../../mod.ts";
import { bytes, incKernel, readU32, withClient } from "../_gpu.ts";

/** The binding of `h` as a plain object (not a `Handle`). */
const plain = (h: Handle): BufferBinding => ({
  memory: h.memory,
  offsetStart: h.offsetStart,
  offsetEnd: h.offsetEnd,
  stream: h.stream,
  size: h.size,
});

/** Runs `fn` with a second client whose memory `foreign` holds [1, 2, 3, 4]. */
async function withForeign(fn: (client: ComputeClient, foreign: Handle) => Promise<void>): Promise<void> {
  const other = await createClient();
  try {
    const foreign = other.create(new Uint32Array([1, 2, 3, 4]));
    await withClient((client) => fn(client, foreign));
    assert.deepEqual([...await readU32(other, foreign)], [1, 2, 3, 4], "the other client's memory is untouched");
  } finally {
    other.destroy();
  }
}

const foreignMessage = (call: string, h: Handle) =>
  new RegExp(`^${call}: memory ${h.memory.id} belongs to another server`);

for (const [form, binding] of [["handle", (h: Handle) => h], ["plain binding", plain]] as const) {
  Deno.test(`server.read of another server's memory (as a ${form}) rejects with a TypeError, and the launches queued with it run`, async () => {
    await withForeign(async (client, foreign) => {
      const x = client.create(new Uint32Array([10, 20, 30, 40]));
      client.launch(incKernel, [1], [x]); // queued in the same batch as the read's copy would be
      const mine = { binding: x, shape: [4], strides: [1], elemSize: 4 };
      const theirs = { binding: binding(foreign), shape: [4], strides: [1], elemSize: 4 };
      await assert.rejects(client.server.read([mine, theirs], 0), (e: unknown) => {
        assert.ok(e instanceof TypeError, String(e));
        assert.match(e.message, foreignMessage("read\\[1\\]", foreign));
        return true;
      });
      await client.flush(); // nothing was queued by the refused read
      assert.deepEqual([...await readU32(client, x)], [11, 21, 31, 41]);
    });
  });

  Deno.test(`server.write into another server's memory (as a ${form}) throws a TypeError and writes nothing`, async () => {
    await withForeign(async (client, foreign) => {
      const x = client.create(new Uint32Array([10, 20, 30, 40]));
      const mine = { binding: x, shape: [4], strides: [1], elemSize: 4 };
      const theirs = { binding: binding(foreign), shape: [4], strides: [1], elemSize: 4 };
      assert.throws(
        () =>
          client.server.write([
            [mine, bytes(new Uint32Array([5, 6, 7, 8]))],
            [theirs, bytes(new Uint32Array([9, 9, 9, 9]))],
          ], 0),
        (e: unknown) => {
          assert.ok(e instanceof TypeError, String(e));
          assert.match(e.message, foreignMessage("write\\[1\\]", foreign));
          return true;
        },
      );
      await client.flush(); // no error was queued either
      assert.deepEqual([...await readU32(client, x)], [10, 20, 30, 40], "the call's own memory was not written");
    });
  });

  Deno.test(`server.getResource of another server's memory (as a ${form}) throws a TypeError`, async () => {
    await withForeign(async (client, foreign) => {
      assert.throws(() => client.server.getResource(binding(foreign), 0), (e: unknown) => {
        assert.ok(e instanceof TypeError, String(e));
        assert.match(e.message, foreignMessage("getResource", foreign));
        return true;
      });
      await client.flush();
    });
  });
}

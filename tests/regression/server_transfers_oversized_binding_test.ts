/**
 * Regression: server-level `read`, `write` and `getResource` took a plain
 * binding whose `size` claims more bytes than its memory holds. The
 * descriptor checks only compared the copy with the binding's own `size`, so
 * a write through such a binding overwrote the reservations after it in the
 * same page, a read returned their bytes, and `getResource` handed out a range
 * covering them. They now refuse it at once with a `RangeError` naming the
 * call, the memory and both sizes, before anything is written or queued.
 *
 * Found by the server-transfer audit (a forged binding is reachable only
 * through the raw server API; the client's handles carry their real size).
 */

import assert from "node:assert/strict";
import type { BufferBinding } from "../../server.ts";
import type { Handle } from "../../mod.ts";
import { bytes, readU32, withClient } from "../_gpu.ts";

/** `h`'s binding as a plain object claiming `size` bytes. */
const claiming = (h: Handle, size: number): BufferBinding => ({
  memory: h.memory,
  offsetStart: 0,
  offsetEnd: 0,
  stream: h.stream,
  size,
});

const oversized = (call: string, h: Handle) =>
  new RegExp(`^${call}: the binding claims 4 KiB but memory ${h.memory.id} holds 16 B`);

Deno.test("server.write through a binding larger than its memory throws a RangeError and overwrites no neighbour", async () => {
  await withClient(async (client) => {
    const a = client.create(new Uint32Array([1, 2, 3, 4]));
    const b = client.create(new Uint32Array([5, 6, 7, 8]));
    const d = { binding: claiming(a, 4096), shape: [1024], strides: [1], elemSize: 4 };
    assert.throws(() => client.server.write([[d, bytes(new Uint32Array(1024).fill(9))]], 0), (e: unknown) => {
      assert.ok(e instanceof RangeError, String(e));
      assert.match(e.message, oversized("write\\[0\\]", a));
      return true;
    });
    await client.flush();
    assert.deepEqual([...await readU32(client, a)], [1, 2, 3, 4]);
    assert.deepEqual([...await readU32(client, b)], [5, 6, 7, 8]);
  });
});

Deno.test("server.read through a binding larger than its memory rejects with a RangeError", async () => {
  await withClient(async (client) => {
    const a = client.create(new Uint32Array([1, 2, 3, 4]));
    client.create(new Uint32Array([5, 6, 7, 8]));
    const d = { binding: claiming(a, 4096), shape: [1024], strides: [1], elemSize: 4 };
    await assert.rejects(client.server.read([d], 0), (e: unknown) => {
      assert.ok(e instanceof RangeError, String(e));
      assert.match(e.message, oversized("read\\[0\\]", a));
      return true;
    });
    assert.deepEqual([...await readU32(client, a)], [1, 2, 3, 4], "the client is still usable");
  });
});

Deno.test("server.getResource of a binding larger than its memory throws a RangeError", async () => {
  await withClient(async (client) => {
    const a = client.create(new Uint32Array([1, 2, 3, 4]));
    assert.throws(() => client.server.getResource(claiming(a, 4096), 0), (e: unknown) => {
      assert.ok(e instanceof RangeError, String(e));
      assert.match(e.message, oversized("getResource", a));
      return true;
    });
    const r = client.server.getResource(claiming(a, 16), 0);
    assert.equal(r.size, 16);
    r.release();
    assert.deepEqual([...await readU32(client, a)], [1, 2, 3, 4], "the client is still usable");
  });
});

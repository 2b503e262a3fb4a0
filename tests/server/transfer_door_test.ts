/**
 * Contract under test: the door of reads and writes (`src/contract/transfer_checks.ts`), which every transfer
 * passes once, where it enters a device link. A server called directly checks every argument there; a client,
 * which built its descriptors from handles it checked, passes its `checked` flag and the server trusts it.
 */

import assert from "node:assert/strict";
import { IoError } from "../../mod.ts";
import { ManagedMemory } from "../../server.ts";
import { checkReads, checkWrites } from "../../src/contract/transfer_checks.ts";
import { withClient } from "../_gpu.ts";

Deno.test("checkReads() names the call and the descriptor, and returns each descriptor's bytes", async (t) => {
  const owner = {};
  const memory = new ManagedMemory(1, 1);
  const binding = { memory, stream: 0, size: 64, offsetStart: 0, offsetEnd: 0 };
  await t.step("a good read gives its sizes", () => {
    const d = { binding, shape: [2, 4], strides: [4, 1], elemSize: 4 };
    assert.deepEqual(checkReads(owner, [d, { ...d, shape: [3], strides: [1] }], null), [32, 12]);
  });
  await t.step("strides that are not contiguous are unsupported-strides", () => {
    assert.throws(
      () => checkReads(owner, [{ binding, shape: [2, 2], strides: [1, 2], elemSize: 4 }], null, "readTensor"),
      (e: unknown) => e instanceof IoError && e.kind === "unsupported-strides" && /^readTensor:/.test(e.message),
    );
  });
  await t.step("a descriptor beyond its memory names read[i]", () => {
    assert.throws(
      () =>
        checkReads(owner, [{ binding, shape: [4], strides: [1], elemSize: 4 }, {
          binding,
          shape: [17],
          strides: [1],
          elemSize: 4,
        }], null),
      /^RangeError: read\[1\]: the descriptor covers 68 B/,
    );
  });
  await t.step("into of the wrong length is refused", () => {
    assert.throws(
      () => checkReads(owner, [{ binding, shape: [4], strides: [1], elemSize: 4 }], [new Uint8Array(8)]),
      /read\[0\]: 16 B to read into 8 B/,
    );
  });
  await t.step("a write of the wrong length, or not a pair, changes nothing and says which", () => {
    const d = { binding, shape: [4], strides: [1], elemSize: 4 };
    assert.throws(() => checkWrites(owner, [[d, new Uint8Array(16)], [d, new Uint8Array(15)]]), /write\[1\]: 15 B/);
    assert.throws(() => checkWrites(owner, [d as never]), /write\[0\]: expected a \[CopyDescriptor, Uint8Array\] pair/);
  });
});

Deno.test("a server called directly checks at its door what a client's read never sends it", async () => {
  await withClient(async (client) => {
    const server = client.server;
    const h = client.create(new Float32Array([1, 2, 3, 4]));
    await withClient(async (other) => {
      const foreign = other.create(new Float32Array(4));
      // Memory of another server: refused at the door, before anything is read.
      await assert.rejects(() => server.read([foreign.copyDescriptor([4], [1], 4)], 0), /belongs to another server/);
      assert.throws(
        () => server.write([[foreign.copyDescriptor([4], [1], 4), new Uint8Array(16)]], 0),
        /belongs to another server/,
      );
      // Through the client the same mistake is refused at the client's door, naming the call.
      await assert.rejects(
        () => client.read(foreign),
        /^TypeError: read: memory \d+ belongs to another client's device/,
      );
    });
    // A binding claiming more bytes than its memory holds.
    const binding = { memory: h.memory, stream: h.stream, size: 1 << 20, offsetStart: 0, offsetEnd: 0 };
    await assert.rejects(
      () => server.read([{ binding, shape: [8], strides: [1], elemSize: 4 }], 0),
      /claims 1 MiB but memory \d+ holds/,
    );
    assert.deepEqual([...new Float32Array((await client.read(h)).buffer, 0, 4)], [1, 2, 3, 4]);
  });
});

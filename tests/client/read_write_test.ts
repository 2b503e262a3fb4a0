/**
 * Contract under test: bytes written into memory are read back unchanged,
 * for every size from 1 B to 64 MiB (unaligned ones too), and reads see
 * every write queued before them.
 */

import assert from "node:assert/strict";
import { Handle } from "../../mod.ts";
import { bytes, readF32, rng } from "../_gpu.ts";
import { clientTest, inProcess } from "../_clients.ts";

function pattern(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  const r = rng(seed);
  for (let i = 0; i < size; i++) out[i] = (r() * 256) | 0;
  return out;
}

clientTest("ComputeClient.create() then read() returns the same bytes, 1 B to 64 MiB", async (client) => {
  const sizes = [
    1,
    2,
    3,
    4,
    5,
    7,
    13,
    31,
    255,
    256,
    257,
    1000,
    4093,
    65_537,
    1 << 20,
    (1 << 20) + 3,
    16 << 20,
    64 << 20,
  ];
  for (const size of sizes) {
    const data = pattern(size, size);
    const h = client.create(data);
    const back = await client.read(h);
    assert.equal(back.byteLength, size, `size ${size}`);
    assert.ok(back.every((v, i) => v === data[i]), `bytes differ at size ${size}`);
    h.release();
  }
});

clientTest("ComputeClient.write() overwrites memory in place and a later read sees it", async (client) => {
  const h = client.create(new Float32Array([1, 2, 3, 4]));
  client.write(h, new Float32Array([9, 8, 7, 6]));
  assert.deepEqual([...await readF32(client, h)], [9, 8, 7, 6]);
  client.write(h, new Uint8Array(16));
  assert.deepEqual([...await readF32(client, h)], [0, 0, 0, 0]);
});

clientTest("ComputeClient.readMany() reads several handles in one batch", async (client) => {
  const hs = [1, 5, 12, 300].map((n) => client.create(pattern(n, n)));
  const out = await client.readMany(hs);
  assert.deepEqual(out.map((b) => b.byteLength), [1, 5, 12, 300]);
  out.forEach((b, i) => assert.deepEqual(b, pattern([1, 5, 12, 300][i]!, [1, 5, 12, 300][i]!)));
});

clientTest("reads requested in the same tick all resolve with their own bytes", async (client) => {
  const hs = Array.from({ length: 16 }, (_, i) => client.create(new Uint32Array([i, i * 2, i * 3])));
  const all = await Promise.all(hs.map((h) => client.read(h)));
  all.forEach((b, i) => assert.deepEqual([...new Uint32Array(b.buffer, b.byteOffset, 3)], [i, i * 2, i * 3]));
});

clientTest("a zero-size handle is allowed and reads back empty", async (client) => {
  const h = client.empty(0);
  assert.equal((await client.read(h)).byteLength, 0);
  const e = client.empty(4);
  assert.equal((await client.read(e)).byteLength, 4);
});

clientTest("Handle.view() reads exactly its sub-range", async (client) => {
  const h = client.create(new Uint32Array([10, 11, 12, 13, 14, 15]));
  const v = h.view(8, 4);
  assert.equal(v.sizeInUse, 12);
  const b = await client.read(v);
  assert.deepEqual([...new Uint32Array(b.buffer, b.byteOffset, 3)], [12, 13, 14]);
  client.write(v, new Uint32Array([1, 2, 3]));
  const all = await client.read(h);
  assert.deepEqual([...new Uint32Array(all.buffer, all.byteOffset, 6)], [10, 11, 1, 2, 3, 15]);
});

clientTest("reading or writing a released handle throws a TypeError naming it", async (client) => {
  const h = client.create(new Uint8Array([1, 2, 3, 4]));
  h.release();
  assert.ok(h.released);
  await assert.rejects(
    () => client.read(h),
    (e: unknown) => e instanceof TypeError && /was released/.test(e.message),
  );
  assert.throws(() => client.write(h, new Uint8Array(4)), /was released/);
  assert.throws(() => h.clone(), /was released/);
  h.release(); // releasing twice is a no-op
});

clientTest("a released handle's memory is reused by the next allocation of that size", async (client) => {
  const a = client.create(new Uint8Array(1000).fill(7));
  const sliceA = a.memory.slice;
  const reserved = (await client.memoryUsage()).bytesReserved;
  a.release();
  const b = client.empty(1000);
  if (inProcess(client)) {
    assert.equal(b.memory.slice?.page, sliceA?.page);
    assert.equal(b.memory.slice?.offset, sliceA?.offset);
  }
  assert.equal((await client.memoryUsage()).bytesReserved, reserved);
  assert.equal((await client.memoryUsage()).numberAllocs, 1);
});

clientTest("clones keep memory alive until every clone is released", async (client) => {
  const a = client.create(new Uint8Array([5, 6, 7, 8]));
  const c = a.clone();
  assert.equal(a.canMut(), false);
  a.release();
  assert.equal(c.canMut(), true);
  const other = client.empty(4);
  if (inProcess(client)) assert.notEqual(other.memory.slice, c.memory.slice);
  assert.deepEqual([...await client.read(c)], [5, 6, 7, 8]);
  c.release();
  {
    using scoped = client.empty(4);
    assert.ok(scoped instanceof Handle);
  }
  assert.equal((await client.memoryUsage()).numberAllocs, 1);
});

clientTest("write() rejects a byte length that differs from the handle's size", (client) => {
  const h = client.empty(8);
  assert.throws(() => client.write(h, new Uint8Array(7)), RangeError);
  assert.throws(() => client.write(h, "nope" as unknown as Uint8Array), TypeError);
  assert.deepEqual(bytes(new Uint8Array(2)), new Uint8Array(2));
});

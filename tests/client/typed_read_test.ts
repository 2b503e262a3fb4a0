/**
 * Typed reads: `read(h, Float32Array)`, `readMany(hs, Uint32Array)` and
 * `readTensor(t, Float32Array)` return a typed array of exactly the bytes
 * read, typed over an `ArrayBuffer` so it type-checks without casts; a size
 * that is not a whole number of elements is refused before anything is read.
 */

import assert from "node:assert/strict";
import type { Handle } from "../../mod.ts";
import { clientTest } from "../_clients.ts";

clientTest("read(h, Float32Array) returns the elements as a Float32Array<ArrayBuffer>", async (client) => {
  using h = client.create(new Float32Array([1.5, -2, 3.25]));
  const values: Float32Array<ArrayBuffer> = await client.read(h, Float32Array);
  assert.ok(values instanceof Float32Array);
  assert.deepEqual([...values], [1.5, -2, 3.25]);
  const bytes: Uint8Array<ArrayBuffer> = await client.read(h, Uint8Array);
  assert.ok(bytes instanceof Uint8Array);
  assert.equal(bytes.byteLength, 12);
});

clientTest("readMany(handles, Uint32Array) returns one Uint32Array per handle", async (client) => {
  using a = client.create(new Uint32Array([1, 2]));
  using b = client.create(new Uint32Array([3, 4, 5]));
  const [x, y] = await client.readMany([a, b], Uint32Array);
  assert.deepEqual([x!.length, y!.length], [2, 3]);
  assert.deepEqual([...x!, ...y!], [1, 2, 3, 4, 5]);
});

clientTest("readTensor(t, Float32Array) returns the tensor's elements", async (client) => {
  const [t] = client.createTensors([{
    descriptor: { shape: [2, 3], elemSize: 4 },
    data: new Float32Array([1, 2, 3, 4, 5, 6]),
  }]);
  assert.deepEqual([...await client.readTensor(t!, Float32Array)], [1, 2, 3, 4, 5, 6]);
  t!.handle.release();
});

clientTest("typed reads take 8-byte and 2-byte element types", async (client) => {
  using h = client.create(new BigInt64Array([-5n, 1n << 40n]));
  assert.deepEqual([...await client.read(h, BigInt64Array)], [-5n, 1n << 40n]);
  // Another type than its own reads through its bytes type (`Handle`): a reinterpretation, said so.
  assert.deepEqual([...await client.read(h as Handle, Int16Array)].slice(0, 4), [-5, -1, -1, -1]);
});

clientTest("a read whose bytes are not a whole number of elements is refused before reading", async (client) => {
  using h = client.create(new Uint8Array([1, 2, 3, 4, 5, 6]));
  await assert.rejects(
    client.read(h, Float32Array),
    (e: unknown) =>
      e instanceof RangeError && /6 B is not a whole number of Float32Array elements \(4 B each\)/.test(e.message),
  );
  await assert.rejects(client.read(h, {} as never), TypeError);
  assert.deepEqual([...await client.read(h, Uint16Array)], [0x0201, 0x0403, 0x0605]);
});

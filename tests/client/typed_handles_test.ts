/**
 * Contract under test: a handle made from a typed array remembers its element
 * type (`Handle.elementType`), and `read(h)`/`readMany(hs)` with no type
 * return each handle's elements as that typed array, converted on the main
 * thread for either client; bytes, `DataView`s, `ArrayBuffer`s, staging views
 * and `empty` memory read as bytes; an explicit type wins; `clone()` and
 * `view()` keep the type, and a read with a handle's own type refuses a view
 * that is not a whole number of its elements, before anything is read;
 * `toClient` copies keep the type; tensors stay bytes unless a type is given.
 */

import assert from "node:assert/strict";
import type { Handle, TypedArray, TypedArrayType } from "../../mod.ts";
import { plusOneKernel, rng } from "../_gpu.ts";
import { clientTest } from "../_clients.ts";

/** Every typed array constructor this runtime has, with values that fit it. */
function samples(): { type: TypedArrayType<TypedArray>; data: TypedArray }[] {
  const r = rng(32);
  const ints = (n: number, lo: number, hi: number) => Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo)));
  const list: { type: TypedArrayType<TypedArray>; data: TypedArray }[] = [
    { type: Int8Array, data: Int8Array.from(ints(7, -128, 128)) },
    { type: Uint8ClampedArray, data: Uint8ClampedArray.from(ints(5, 0, 256)) },
    { type: Int16Array, data: Int16Array.from(ints(6, -32768, 32768)) },
    { type: Uint16Array, data: Uint16Array.from(ints(3, 0, 65536)) },
    { type: Int32Array, data: Int32Array.from(ints(9, -(2 ** 31), 2 ** 31)) },
    { type: Uint32Array, data: Uint32Array.from(ints(4, 0, 2 ** 32)) },
    { type: Float32Array, data: Float32Array.from(ints(8, -1000, 1000), (v) => v / 7) },
    { type: Float64Array, data: Float64Array.from(ints(3, -1000, 1000), (v) => v / 3) },
    { type: BigInt64Array, data: BigInt64Array.from(ints(2, -1000, 1000), (v) => BigInt(v) << 40n) },
    { type: BigUint64Array, data: BigUint64Array.from(ints(2, 0, 1000), (v) => BigInt(v) << 50n) },
  ];
  const f16 = (globalThis as { Float16Array?: TypedArrayType<TypedArray> & { from(a: number[]): TypedArray } })
    .Float16Array;
  if (f16 !== undefined) list.push({ type: f16, data: f16.from([0.5, -2, 1024, 3.25]) });
  return list;
}

clientTest("a handle made from each typed array reads back, with no type, as that typed array", async (client) => {
  for (const { type, data } of samples()) {
    using h = client.create(data);
    assert.equal(h.elementType, type, type.name);
    const got = await client.read(h);
    assert.ok(got instanceof type, `${type.name}: got a ${Object.prototype.toString.call(got)}`);
    assert.deepEqual([...got], [...data], type.name);
  }
});

clientTest("bytes, DataViews, ArrayBuffers, staging views and empty memory read as bytes", async (client) => {
  const bytes = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const [staged] = client.staging([8]);
  staged!.set(bytes);
  const handles = [
    client.create(bytes),
    client.create(new DataView(bytes.slice().buffer)),
    client.create(bytes.slice().buffer),
    client.create(staged!),
  ];
  for (const [i, h] of handles.entries()) {
    assert.equal(h.elementType, Uint8Array, `handle ${i}`);
    const got = await client.read(h);
    assert.ok(got instanceof Uint8Array, `handle ${i}`);
    assert.deepEqual([...got], [...bytes], `handle ${i}`);
    h.release();
  }
  using e = client.empty(12);
  assert.equal(e.elementType, Uint8Array);
  assert.equal((await client.read(e)).length, 12, "12 bytes, not 3 words");
});

clientTest("an explicit type overrides the handle's own", async (client) => {
  const data = new Float32Array([1, -2, 0.25]);
  using h = client.create(data);
  const asBytes = await client.read(h, Uint8Array);
  assert.ok(asBytes instanceof Uint8Array);
  assert.deepEqual([...asBytes], [...new Uint8Array(data.buffer)]);
  const bits = await client.read(h as Handle, Uint32Array);
  assert.ok(bits instanceof Uint32Array);
  assert.deepEqual([...bits], [...new Uint32Array(data.buffer)]);
  const [many] = await client.readMany([h], Uint8Array);
  assert.deepEqual([...many!], [...asBytes]);
});

clientTest("readMany returns each handle as its own type in one batch", async (client) => {
  using f = client.create(new Float32Array([1.5, 2.5]));
  using u = client.create(new Uint16Array([7, 8, 9]));
  using b = client.empty(3);
  client.write(b, new Uint8Array([4, 5, 6]));
  const [x, y, z] = await client.readMany([f, u, b]);
  assert.ok(x instanceof Float32Array && y instanceof Uint16Array && z instanceof Uint8Array);
  assert.deepEqual([[...x], [...y], [...z]], [[1.5, 2.5], [7, 8, 9], [4, 5, 6]]);
});

clientTest("clone and view keep the element type and read their own elements", async (client) => {
  using h = client.create(new Int32Array([10, -11, 12, -13, 14]));
  using c = h.clone();
  assert.equal(c.elementType, Int32Array);
  assert.deepEqual([...await client.read(c)], [10, -11, 12, -13, 14]);
  using v = h.view(4, 8);
  using vv = v.view(4);
  assert.equal(v.elementType, Int32Array);
  assert.deepEqual([...await client.read(v)], [-11, 12]);
  assert.deepEqual([...await client.read(vv)], [12]);
});

clientTest(
  "a read with its own type refuses a view that is not whole elements, before reading; bytes read it",
  async (client) => {
    using h = client.create(new Float32Array([1, 2, 3, 4]));
    using odd = h.view(4, 2); // 10 bytes: two and a half floats
    await assert.rejects(client.read(odd), (e: unknown) => {
      assert.ok(e instanceof RangeError, String(e));
      assert.match(e.message, /^read: 10 B is not a whole number of Float32Array elements \(4 B each\)/);
      assert.match(e.message, /the handle's element type; read it as Uint8Array for its bytes/);
      return true;
    });
    await assert.rejects(client.readMany([h, odd]), /readMany\[1\]: 10 B is not a whole number of Float32Array/);
    const bytes = await client.read(odd, Uint8Array);
    assert.deepEqual([...bytes], [...new Uint8Array(new Float32Array([2, 3, 4]).buffer).subarray(0, 10)]);
    assert.deepEqual([...await client.read(h)], [1, 2, 3, 4], "the client stays usable");
  },
);

clientTest("a kernel's output into a typed handle reads back as that type, against the CPU", async (client) => {
  const r = rng(5);
  const src = Float32Array.from({ length: 200 }, () => r() * 50 - 25);
  using a = client.create(src);
  using out = client.create(new Float32Array(src.length));
  client.launch(plusOneKernel, [Math.ceil(src.length / 64)], { src: a, dst: out });
  const got = await client.read(out);
  assert.ok(got instanceof Float32Array);
  assert.deepEqual(got, src.map((v) => Math.fround(v + 1)));
});

clientTest("toClient copies keep the element type; a view of part of an element copies as bytes", async (client) => {
  using h = client.create(new Uint16Array([1, 2, 3, 4]));
  using copy = await client.toClient(h, client);
  assert.equal(copy.elementType, Uint16Array);
  assert.deepEqual([...await client.read(copy)], [1, 2, 3, 4]);
  using part = h.view(4, 1); // 3 bytes
  using partCopy = await client.toClient(part, client);
  assert.equal(partCopy.elementType, Uint8Array);
  assert.deepEqual([...await client.read(partCopy)], [3, 0, 4]);
});

clientTest("tensors stay bytes unless a type is given", async (client) => {
  const [t] = client.createTensors([{ descriptor: { shape: [3], elemSize: 4 }, data: new Float32Array([1, 2, 3]) }]);
  assert.equal(t!.handle.elementType, Uint8Array);
  const bytes = await client.readTensor(t!);
  assert.ok(bytes instanceof Uint8Array && bytes.length === 12);
  assert.deepEqual([...await client.readTensor(t!, Float32Array)], [1, 2, 3]);
  t!.handle.release();
});

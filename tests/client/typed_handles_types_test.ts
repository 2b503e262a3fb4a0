/**
 * The element type of a handle in TypeScript: `deno check` (which `deno test`
 * runs first) verifies every line here, a `// @ts-expect-error` line failing
 * the check when it is no longer an error. `create` of a typed array gives a
 * `Handle` of that type; `read(h)` with no type resolves to it; a read of a
 * typed handle as another type than its own or bytes is a type error (a
 * reinterpretation reads through `Handle`, bytes); a bytes handle reads as
 * any type; a typed handle is a `Handle` but not a handle of another type,
 * and a bytes handle is no typed one. The lines also run, so what TypeScript
 * is told is checked against what comes back.
 */

import assert from "node:assert/strict";
import type { ElementsOf, Handle, TypedArray } from "../../mod.ts";
import { plusOneKernel } from "../_gpu.ts";
import { clientTest } from "../_clients.ts";

/** True when `A` and `B` are the same type. */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true : false;

/** Compiles only when `T` is `true`. */
function expectType<T extends true>(_: T): void {}

clientTest("a typed handle's reads, clones, views and assignments type-check as its element type", async (client) => {
  using f = client.create(new Float32Array([1, 2]));
  expectType<Equal<typeof f, Handle<Float32Array<ArrayBuffer>>>>(true);
  const annotated: Handle<Float32Array> = f;
  const bytesHandle: Handle = f; // every handle is a handle of bytes
  using e = client.empty(8);
  expectType<Equal<typeof e, Handle<Uint8Array<ArrayBuffer>>>>(true);
  expectType<Equal<typeof e, Handle>>(true);

  const own = await client.read(f);
  expectType<Equal<typeof own, Float32Array<ArrayBuffer>>>(true);
  assert.ok(own instanceof Float32Array);
  const annotatedResult: Float32Array = await client.read(f); // a declared result type does not steer the read
  const explicitAnnotated: Float32Array = await client.read(e, Float32Array);
  assert.ok(annotatedResult instanceof Float32Array && explicitAnnotated instanceof Float32Array);
  const ownAnnotated = await client.read(annotated);
  expectType<Equal<typeof ownAnnotated, Float32Array>>(true);
  const explicit = await client.read(f, Float32Array);
  expectType<Equal<typeof explicit, Float32Array<ArrayBuffer>>>(true);
  const asBytes = await client.read(f, Uint8Array);
  expectType<Equal<typeof asBytes, Uint8Array<ArrayBuffer>>>(true);
  assert.ok(asBytes instanceof Uint8Array);
  const reinterpreted = await client.read(bytesHandle, Uint32Array);
  expectType<Equal<typeof reinterpreted, Uint32Array<ArrayBuffer>>>(true);
  assert.ok(reinterpreted instanceof Uint32Array);
  // @ts-expect-error A Handle<Float32Array> reads as Float32Array or bytes, not as Uint32Array.
  const mismatched = await client.read(f, Uint32Array);
  assert.ok(mismatched instanceof Uint32Array, "at run time an explicit type wins");

  const emptyOwn = await client.read(e);
  expectType<Equal<typeof emptyOwn, Uint8Array<ArrayBuffer>>>(true);
  const emptyAsF32 = await client.read(e, Float32Array);
  expectType<Equal<typeof emptyAsF32, Float32Array<ArrayBuffer>>>(true);

  using u = client.create(new Uint32Array([3]));
  const [x, y, z] = await client.readMany([f, u, e]);
  expectType<
    Equal<
      [typeof x, typeof y, typeof z],
      [Float32Array<ArrayBuffer>, Uint32Array<ArrayBuffer>, Uint8Array<ArrayBuffer>]
    >
  >(true);
  const declared: [Float32Array, Uint32Array] = await client.readMany([f, u]);
  assert.ok(declared[1] instanceof Uint32Array);
  const all = await client.readMany([f, f], Float32Array);
  expectType<Equal<typeof all, Float32Array<ArrayBuffer>[]>>(true);
  // @ts-expect-error readMany's type must be one of the handles' types, or bytes.
  await client.readMany([f], Int16Array);
  const list: Handle[] = [f, u, e];
  const fromList = await client.readMany(list);
  expectType<Equal<typeof fromList, Uint8Array<ArrayBuffer>[]>>(true);

  using c = f.clone();
  using v = f.view(4);
  expectType<Equal<typeof c | typeof v, Handle<Float32Array<ArrayBuffer>>>>(true);

  // @ts-expect-error A Handle<Float32Array> is not a Handle<Uint32Array>.
  const other: Handle<Uint32Array> = f;
  // @ts-expect-error A handle of bytes is not a Handle<Float32Array>: reading it with no type gives bytes.
  const notTyped: Handle<Float32Array> = e;
  assert.equal(other.elementType, Float32Array);
  assert.equal(notTyped.elementType, Uint8Array);

  client.launch(plusOneKernel, [1], { src: f, dst: e }); // named and positional buffers take any handle
  client.launch(plusOneKernel, [1], [f, u]);
  await client.sync();
});

clientTest("create's handle carries the element type of what it was given", async (client) => {
  using d = client.create(new DataView(new ArrayBuffer(4)));
  using b = client.create(new ArrayBuffer(4));
  using u8 = client.create(new Uint8Array(4));
  expectType<Equal<typeof d | typeof b | typeof u8, Handle>>(true);
  const view: ArrayBufferView = new Int16Array([1, -1]);
  using unknownView = client.create(view);
  expectType<Equal<typeof unknownView, Handle<TypedArray>>>(true);
  const got = await client.read(unknownView);
  expectType<Equal<typeof got, TypedArray>>(true);
  assert.ok(got instanceof Int16Array, "at run time it is the view's own type");
  expectType<Equal<ElementsOf<BigInt64Array>, BigInt64Array<ArrayBuffer>>>(true);
  expectType<Equal<ElementsOf<Float32Array<SharedArrayBuffer>>, Float32Array<ArrayBuffer>>>(true);
});

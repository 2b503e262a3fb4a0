/** `packInfo` packs fields of mixed 32-bit types in order, and refuses values it would have to wrap. */

import assert from "node:assert/strict";
import { packInfo } from "../../mod.ts";
import { readF32, withClient } from "../_gpu.ts";
import { defineKernel } from "../../mod.ts";

Deno.test("packInfo lays u32, i32 and f32 fields and arrays out in order, one word each", () => {
  const w = packInfo({ u32: 7 }, { f32: [0.5, -1] }, { i32: -2 }, { u32: [0xffff_ffff] });
  assert.equal(w.length, 5);
  assert.equal(w[0], 7);
  assert.deepEqual([...new Float32Array(w.buffer, 4, 2)], [0.5, -1]);
  assert.equal(new Int32Array(w.buffer)[3], -2);
  assert.equal(w[4], 0xffff_ffff);
  assert.equal(packInfo().length, 0);
});

Deno.test("packInfo refuses values out of range and fields that are not one of u32, i32, f32", () => {
  assert.throws(() => packInfo({ u32: -1 }), /field 0 \(u32\) is -1, not an integer in \[0, 2\^32\)/);
  assert.throws(() => packInfo({ u32: 1 }, { i32: 2 ** 31 }), /field 1 \(i32\) is 2147483648/);
  assert.throws(() => packInfo({ u32: 1.5 }), RangeError);
  assert.throws(() => packInfo({ f32: "1" as unknown as number }), TypeError);
  assert.throws(
    () => packInfo({ u32: 1, f32: 2 } as never),
    /exactly one of \{ u32 \}, \{ i32 \} or \{ f32 \}, got \{ u32, f32 \}/,
  );
  assert.throws(() => packInfo(3 as never), TypeError);
});

const saxpy = defineKernel({
  name: "pack-info-saxpy",
  wgsl: `
struct Info { n: u32, a: f32, b: i32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> info: Info;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < info.n) { x[g.x] = info.a * x[g.x] + f32(info.b); }
}`,
});

Deno.test("words from packInfo drive a kernel reading a struct of u32, f32 and i32", async () => {
  await withClient(async (client) => {
    using x = client.create(new Float32Array([1, 2, 3, 4]));
    client.launch(saxpy, [1], [x], packInfo({ u32: 3 }, { f32: 2 }, { i32: -1 }));
    assert.deepEqual([...await readF32(client, x)], [1, 3, 5, 4]);
  });
});

/**
 * Contract under test: a `var<uniform>` binds like any other handle, one
 * launch argument in `(group, binding)` order, and its struct keeps the
 * memory layout WGSL gives it in the uniform address space (the runtime
 * compiles it as read-only or read-write storage, where WGSL lays a type out
 * the same way). A uniform declared last takes info words too.
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { readF32, withClient } from "../_gpu.ts";

/** A params struct mixing scalars, vectors (a vec3 followed by a packed f32) and a stride-16 array. */
const MIXED = `
struct Params {
  scale: f32,                // offset 0
  count: u32,                // 4
  offset: vec2f,             // 8
  tint: vec3f,               // 16 (vec3 aligns to 16)
  bias: f32,                 // 28 (packed into the vec3's last 4 bytes)
  flags: vec4u,              // 32
  weights: array<vec4f, 2>,  // 48, stride 16
  mode: i32,                 // 80; struct size 96
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= params.count) {
    return;
  }
  let w = params.weights[i % 2u];
  var v = src[i] * params.scale + params.offset[i % 2u] + params.tint[i % 3u] + params.bias;
  v += w[i % 4u] * f32(params.flags[i % 4u]) + f32(params.mode);
  dst[i] = v;
}`;

Deno.test("defineKernel() accepts a var<uniform> params struct and it binds like any other handle", async () => {
  const kernel = defineKernel({ name: "uniform-params", wgsl: MIXED });
  assert.equal(kernel.layout.bindings, 3);
  assert.deepEqual(kernel.layout.bindingNames, ["params", "src", "dst"]);
  const p = {
    scale: 1.5,
    count: 90,
    offset: [0.25, -0.5],
    tint: [1, 2, 3],
    bias: 0.125,
    flags: [1, 0, 2, 3],
    weights: [[0.5, 1, 1.5, 2], [-1, -2, -3, -4]],
    mode: -7,
  };
  // Packed by hand at WGSL's uniform offsets: a layout changed by the rewrite would read other fields.
  const bytes = new ArrayBuffer(96);
  const view = new DataView(bytes);
  view.setFloat32(0, p.scale, true);
  view.setUint32(4, p.count, true);
  p.offset.forEach((v, k) => view.setFloat32(8 + 4 * k, v, true));
  p.tint.forEach((v, k) => view.setFloat32(16 + 4 * k, v, true));
  view.setFloat32(28, p.bias, true);
  p.flags.forEach((v, k) => view.setUint32(32 + 4 * k, v, true));
  p.weights.flat().forEach((v, k) => view.setFloat32(48 + 4 * k, v, true));
  view.setInt32(80, p.mode, true);

  const n = 128;
  const src = Float32Array.from({ length: n }, (_, i) => i * 0.75 - 20);
  const expected = new Float32Array(n);
  for (let i = 0; i < p.count; i++) {
    const w = p.weights[i % 2]!;
    expected[i] = src[i]! * p.scale + p.offset[i % 2]! + p.tint[i % 3]! + p.bias + w[i % 4]! * p.flags[i % 4]! +
      p.mode;
  }
  await withClient(async (client) => {
    const params = client.create(new Uint8Array(bytes));
    const a = client.create(src);
    const out = client.create(new Float32Array(n));
    client.launch(kernel, [n / 64], [params, a, out]);
    const got = await readF32(client, out);
    for (let i = 0; i < n; i++) assert.ok(Math.abs(got[i]! - expected[i]!) < 1e-4, `${i}: ${got[i]} vs ${expected[i]}`);
  });
});

Deno.test("a var<uniform> declared last takes the info words of a launch", async () => {
  const kernel = defineKernel({
    name: "uniform-info",
    wgsl: `
struct Info { n: u32, k: f32, c: f32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> info: Info;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < info.n) { dst[g.x] = src[g.x] * info.k + info.c; }
}`,
  });
  assert.equal(kernel.layout.bindings, 3);
  const pack = (n: number, k: number, c: number) => {
    const words = new Uint32Array(3);
    words[0] = n;
    new Float32Array(words.buffer, 4, 2).set([k, c]);
    return words;
  };
  await withClient(async (client) => {
    const src = client.create(Float32Array.from({ length: 64 }, (_, i) => i));
    const dst = client.create(new Float32Array(64));
    for (const [k, c] of [[2, 1], [-1, 0.5]] as const) {
      client.launch(kernel, [1], [src, dst], pack(50, k, c));
      const got = await readF32(client, dst);
      assert.deepEqual([...got.subarray(0, 50)], Array.from({ length: 50 }, (_, i) => i * k + c));
    }
    // Without info words the same binding takes a buffer argument, a handle holding the same struct.
    const params = client.create(pack(10, 3, 0.25));
    client.launch(kernel, [1], [src, dst, params]);
    const got = await readF32(client, dst);
    assert.deepEqual([...got.subarray(0, 10)], Array.from({ length: 10 }, (_, i) => i * 3 + 0.25));
    assert.equal(got[10], 10 * -1 + 0.5, "elements past n keep the previous launch's values");
  });
});

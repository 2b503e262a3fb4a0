/**
 * Regression: `defineKernel` accepted a kernel with a `var<uniform>` or a
 * non-info `var<storage, read>` buffer, and the launch then failed at the
 * next sync with a misleading "WGSL compilation failed" carrying wgpu's
 * internal layout text: the runtime bound every buffer as read-write storage
 * through its explicit bind group layout, which the shader's declarations did
 * not match. A newcomer porting a WebGPU sample had to edit each declaration.
 * Now such buffers bind like any other handle (the runtime compiles them as
 * read-write storage) and the kernel runs as written.
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { readF32, withClient } from "../_gpu.ts";

const SCALE = defineKernel({
  name: "regression-uniform-scale",
  wgsl: `
struct Params { factor: f32, count: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < params.count) { dst[g.x] = src[g.x] * params.factor; }
}`,
});

Deno.test("a kernel reading a var<uniform> params struct and a read-only input runs, instead of failing at sync", async () => {
  await withClient(async (client) => {
    const params = new Uint32Array(2);
    new Float32Array(params.buffer, 0, 1)[0] = 2.5;
    params[1] = 10;
    const src = client.create(Float32Array.from({ length: 16 }, (_, i) => i));
    const dst = client.create(new Float32Array(16).fill(-1));
    client.launch(SCALE, [1], [client.create(params), src, dst]);
    const got = await readF32(client, dst);
    assert.deepEqual([...got], Array.from({ length: 16 }, (_, i) => (i < 10 ? i * 2.5 : -1)));
  });
});

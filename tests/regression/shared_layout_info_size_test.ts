/**
 * Regression: two kernels with the same binding shape (here 2 buffers + info)
 * but different info sizes (a 12-byte and an 8-byte info struct), launched in
 * that order into the same compute pass, must both run.
 *
 * Found by the soak test. The pipeline cache gives every kernel of one
 * binding shape the same `GPUPipelineLayout`, and the info binding has no
 * `minBindingSize`, so the driver checks the bound info size against the
 * shader's at dispatch time. Deno 2.9.6's wgpu does not refresh that
 * expectation when `setPipeline` switches to a pipeline with the identical
 * layout (gfx-rs/wgpu#7359, fixed upstream by gfx-rs/wgpu#9341): the second
 * dispatch is checked against the first kernel's 12 bytes, fails validation,
 * and the whole batch (every launch of that submit, on any kernel) is lost;
 * the next read rejects with `DeviceValidationError` "the buffer bound at
 * binding index 2 is bound with size 8 where the shader expects 12".
 */

import assert from "node:assert/strict";
import { defineKernel } from "../../mod.ts";
import { affineKernel, readU32, withClient } from "../_gpu.ts";

/** a[i] = a[i] + b[i] * k; info = [n, k] (8 bytes). `affineKernel` has the same binding shape, with 12 bytes of info. */
const mix = defineKernel({
  name: "regression-mix-info8",
  wgsl: `
struct Info { n: u32, k: u32 }
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@group(0) @binding(2) var<storage, read> info: Info;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < info.n) { a[g.x] = a[g.x] + b[g.x] * info.k; }
}`,
});

Deno.test("kernels of one binding shape with a larger then a smaller info struct run in the same pass", async () => {
  await withClient(async (client) => {
    const x = client.create(new Uint32Array(64).fill(1));
    const y = client.create(new Uint32Array(64).fill(2));
    // Compile and validate both kernels first, each in its own submit (that order works).
    client.launch(mix, [1], [x, y], new Uint32Array([64, 0]));
    await client.sync();
    client.launch(affineKernel, [1], [x, y], new Uint32Array([64, 1, 0]));
    await client.sync();

    // One batch, one pass: the 12-byte-info kernel, then the 8-byte-info one.
    client.launch(affineKernel, [1], [x, y], new Uint32Array([64, 3, 1])); // y = 1 * 3 + 1 = 4
    client.launch(mix, [1], [x, y], new Uint32Array([64, 2])); // x = 1 + 4 * 2 = 9
    const [gx, gy] = await Promise.all([readU32(client, x), readU32(client, y)]);
    assert.ok(gy.every((v) => v === 4), `y: ${gy[0]}`);
    assert.ok(gx.every((v) => v === 9), `x: ${gx[0]}`);
  });
});

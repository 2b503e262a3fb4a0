/**
 * Contract under test: a `var<storage, read>` (or `var<storage>`, read by
 * default) buffer binds like any other handle, also next to a writable slice
 * of the same pool page. WebGPU forbids binding one `GPUBuffer` both
 * read-only and writable in one dispatch, so the runtime compiles such
 * declarations as `read_write`; the user's source stays as written.
 */

import assert from "node:assert/strict";
import { type ComputeClient, defineKernel, type Handle } from "../../mod.ts";
import { readF32, withClient } from "../_gpu.ts";

/** dst[i] = a[i] * 2 + b[i] for i < len(dst), with a read-only and b read by default. */
const READS = `
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage> b: array<f32>;
@group(0) @binding(2) var<storage,read_write> dst: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&dst)) { dst[g.x] = a[g.x] * 2.0 + b[g.x]; }
}`;

/** The GPUBuffer behind a pooled handle. */
function bufferOf(h: Handle): GPUBuffer | null {
  return h.memory.slice?.page.storage.resource ?? null;
}

/** A handle holding f(0..n). */
function create(client: ComputeClient, n: number, f: (i: number) => number): Handle {
  return client.create(Float32Array.from({ length: n }, (_, i) => f(i)));
}

Deno.test("read-only storage buffers bind together with a writable slice of the same pool page", async () => {
  const kernel = defineKernel({ name: "reads", wgsl: READS });
  assert.equal(kernel.wgsl, READS);
  assert.doesNotMatch(kernel.compiledWgsl(false), /var<storage, read>|var<storage>/);
  await withClient(async (client) => {
    const n = 40;
    const a = create(client, n, (i) => i);
    const b = create(client, n, (i) => 100 - i);
    const dst = client.empty(4 * n);
    assert.ok(bufferOf(a) !== null && bufferOf(a) === bufferOf(dst) && bufferOf(b) === bufferOf(dst));
    client.launch(kernel, [1], [a, b, dst]);
    assert.deepEqual([...await readF32(client, dst)], Array.from({ length: n }, (_, i) => i * 2 + 100 - i));
    // The same handle as a read-only and as the written binding: dst = dst * 2 + b.
    client.launch(kernel, [1], [dst, b, dst]);
    assert.deepEqual([...await readF32(client, dst)], Array.from({ length: n }, (_, i) => (i + 100) * 2 + 100 - i));
  });
});

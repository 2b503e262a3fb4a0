/**
 * Throughput: wall time of a 1M-element f32 add, 30 adds per iteration and
 * one completion wait, through the client and through raw WebGPU (one
 * encoder, one pass, cached bind group) in the same group. Both use the same
 * vec4 kernel, so the difference is the runtime's host cost per add.
 *
 * Run: `deno bench --allow-env bench/throughput_bench.ts`.
 */

import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, rawPipelines, storageLayout } from "./_raw.ts";

const N = 1 << 20;
const ADDS = 30;
const WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&out)) { out[g.x] = a[g.x] + b[g.x]; }
}`;
const client = await createClient();
const device = client.server.device;
const add = defineKernel({ name: "add-vec4", wgsl: WGSL });
const a = client.create(new Float32Array(N).fill(1));
const b = client.create(new Float32Array(N).fill(2));
const out = client.empty(N * 4);
const groups = [N / 4 / 64];
const bufs = [a, b, out];
client.launch(add, groups, bufs);
await client.sync();

const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
const raw = [0, 1, 2].map((i) => device.createBuffer({ label: `raw ${i}`, size: N * 4, usage }));
const layout = storageLayout(device, 3);
const [pipeline] = rawPipelines(device, layout, [WGSL]);
const bg = bindBuffers(device, layout, raw);

Deno.bench({ group: "1M-element add ×30 + wait", name: "raw WebGPU", baseline: true, n: 10, warmup: 2 }, async () => {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  for (let i = 0; i < ADDS; i++) {
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(groups[0]!);
  }
  pass.end();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
});

Deno.bench({ group: "1M-element add ×30 + wait", name: "client.launch + sync", n: 10, warmup: 2 }, async () => {
  for (let i = 0; i < ADDS; i++) client.launch(add, groups, bufs);
  await client.sync();
});

globalThis.addEventListener("unload", () => client.destroy());

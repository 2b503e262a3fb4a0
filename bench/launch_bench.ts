/**
 * Launch cost: host time to enqueue one tiny dispatch through
 * `client.launch`, next to the raw WebGPU floor (one encoder, one open pass,
 * a cached bind group, `setBindGroup` + `dispatchWorkgroups` per launch) in the
 * same group, on the same device, so the figures are ratios from one process.
 *
 * Only the encoding loop is timed. Submits happen outside the timed region,
 * because on the software adapter a submit makes the CPU execute the queued
 * dispatches (tens of µs each), which would measure the software GPU, not the
 * runtime. Set `BENCH_TASKS_MAX` to bench another batching (the default here is
 * above the loop length, so no submit happens inside the loop).
 *
 * Run: `deno task bench` (or `deno bench --allow-env bench/launch_bench.ts`).
 */

import { createClient, defineKernel } from "../mod.ts";

const LAUNCHES = 256;
const tasksMax = Number(Deno.env.get("BENCH_TASKS_MAX") ?? LAUNCHES * 4);
const client = await createClient({ tasksMax });
const device = client.server.device;

const WGSL_TINY = `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }`;
const WGSL_INFO = `
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<u32>;
@group(0) @binding(3) var<storage, read_write> d: array<u32>;
@group(0) @binding(4) var<storage, read> info: array<u32>;
@compute @workgroup_size(1) fn main() { d[0] = a[0] + b[0] + c[0] + info[0]; }`;

const tiny = defineKernel({ name: "tiny", wgsl: WGSL_TINY });
const withInfo = defineKernel({ name: "four-buffers-info", wgsl: WGSL_INFO });
const x = client.create(new Uint32Array(64));
const bufs = [0, 1, 2, 3].map(() => client.create(new Uint32Array(64)));
const infos = Array.from({ length: LAUNCHES }, (_, i) => new Uint32Array([i, i * 3, 7, i ^ 5]));
// Warm the caches (pipelines, bind groups) outside the measurements.
client.launch(tiny, [1], [x]);
client.launch(withInfo, [1], bufs, infos[0]);
await client.sync();

// Raw WebGPU objects for the floors.
function storageLayout(n: number, info: boolean): GPUBindGroupLayout {
  const entries: GPUBindGroupLayoutEntry[] = [];
  for (let i = 0; i < n; i++) {
    entries.push({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } });
  }
  if (info) {
    entries.push({
      binding: n,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: "read-only-storage", hasDynamicOffset: true },
    });
  }
  return device.createBindGroupLayout({ label: `raw layout ${n}`, entries });
}
function rawBuffer(size: number, label: string): GPUBuffer {
  return device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
}
const rawTinyLayout = storageLayout(1, false);
const rawTiny = device.createComputePipeline({
  label: "raw tiny",
  layout: device.createPipelineLayout({ bindGroupLayouts: [rawTinyLayout] }),
  compute: { module: device.createShaderModule({ code: WGSL_TINY }), entryPoint: "main" },
});
const rawX = rawBuffer(256, "raw x");
const rawTinyBg = device.createBindGroup({
  layout: rawTinyLayout,
  entries: [{ binding: 0, resource: { buffer: rawX } }],
});

const align = device.limits.minStorageBufferOffsetAlignment;
const rawInfoLayout = storageLayout(4, true);
const rawInfoPipe = device.createComputePipeline({
  label: "raw info",
  layout: device.createPipelineLayout({ bindGroupLayouts: [rawInfoLayout] }),
  compute: { module: device.createShaderModule({ code: WGSL_INFO }), entryPoint: "main" },
});
const rawBufs = [0, 1, 2, 3].map((i) => rawBuffer(256, `raw buffer ${i}`));
const arena = rawBuffer(LAUNCHES * align, "raw info arena");
const arenaHost = new Uint32Array(LAUNCHES * align / 4);
const rawInfoBg = device.createBindGroup({
  layout: rawInfoLayout,
  entries: [
    ...rawBufs.map((buffer, i) => ({ binding: i, resource: { buffer } })),
    { binding: 4, resource: { buffer: arena, offset: 0, size: 16 } },
  ],
});
const dyn = new Uint32Array(1);

Deno.bench({ group: "tiny launch", name: "raw WebGPU floor", baseline: true, n: 40, warmup: 5 }, (b) => {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(rawTiny);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) {
    pass.setBindGroup(0, rawTinyBg);
    pass.dispatchWorkgroups(1);
  }
  b.end();
  pass.end();
  device.queue.submit([encoder.finish()]);
});

Deno.bench({ group: "tiny launch", name: "client.launch", n: 40, warmup: 5 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(tiny, [1], [x]);
  b.end();
  await client.flush();
});

Deno.bench({ group: "4 buffers + changing info", name: "raw WebGPU floor", baseline: true, n: 40, warmup: 5 }, (b) => {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(rawInfoPipe);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) {
    arenaHost.set(infos[i]!, (i * align) / 4);
    dyn[0] = i * align;
    pass.setBindGroup(0, rawInfoBg, dyn, 0, 1);
    pass.dispatchWorkgroups(1);
  }
  device.queue.writeBuffer(arena, 0, arenaHost);
  b.end();
  pass.end();
  device.queue.submit([encoder.finish()]);
});

Deno.bench({ group: "4 buffers + changing info", name: "client.launch", n: 40, warmup: 5 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(withInfo, [1], bufs, infos[i]);
  b.end();
  await client.flush();
});

globalThis.addEventListener("unload", () => client.destroy());

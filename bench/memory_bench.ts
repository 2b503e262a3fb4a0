/**
 * Memory: the cost of getting device memory for a temporary.
 *
 * - "reserve + release, 64 KiB": `client.empty(n).release()` through each pool
 *   kind (sliced, exclusive, direct, persistent), next to a raw
 *   `createBuffer` + `destroy` baseline.
 * - "reserve + release, 4 KiB, 300 live of mixed sizes": the same after the
 *   churn pattern of issue 18 left about 300 allocations of 256 B to 1 MiB
 *   live, for the default layout (best fit over an index of free slices) and
 *   CubeCL's `subslices` (first fit, scanning pages).
 * - "launch loop with temporaries": each launch writes a fresh temporary that
 *   is released right after; the runtime serves it from its pools, the raw
 *   baseline creates a buffer and a bind group per launch and destroys the
 *   buffers after the submit.
 *
 * Run: `deno bench --allow-env bench/memory_bench.ts`.
 */

import { createClient, defineKernel } from "../mod.ts";
import { rawPipelines, storageLayout } from "./_raw.ts";
import { runChurn } from "../tests/memory/_churn.ts";

const SIZE = 64 * 1024;
const N = 100;
const client = await createClient({ tasksMax: 4096 });
const device = client.server.device;
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

const sliced = client.onStream(1);
const exclusive = client.onStream(2);
exclusive.installMemoryPools("exclusive-pages");
const direct = client.onStream(3);
direct.installMemoryPools({ pools: [{ kind: "direct" }] });
const persistent = client.onStream(4);
persistent.allocationMode("persistent");
for (const c of [sliced, exclusive, direct, persistent]) c.empty(SIZE).release();

Deno.bench({ group: "reserve + release, 64 KiB", name: "raw createBuffer + destroy", baseline: true }, () => {
  for (let i = 0; i < N; i++) device.createBuffer({ size: SIZE, usage }).destroy();
});
for (
  const [name, c] of [["sliced", sliced], ["exclusive", exclusive], ["direct", direct], [
    "persistent",
    persistent,
  ]] as const
) {
  Deno.bench({ group: "reserve + release, 64 KiB", name: `client.empty + release (${name} pool)` }, () => {
    for (let i = 0; i < N; i++) c.empty(SIZE).release();
  });
}

const busyCompact = client.onStream(5);
const busySubslices = client.onStream(6);
busySubslices.installMemoryPools("subslices");
for (const c of [busyCompact, busySubslices]) runChurn((n) => c.empty(n), 1, () => 0, 3000);
Deno.bench(
  { group: "reserve + release, 4 KiB, 300 live of mixed sizes", name: "raw createBuffer + destroy", baseline: true },
  () => {
    for (let i = 0; i < N; i++) device.createBuffer({ size: 4096, usage }).destroy();
  },
);
for (const [name, c] of [["compact (default)", busyCompact], ["subslices", busySubslices]] as const) {
  Deno.bench(
    { group: "reserve + release, 4 KiB, 300 live of mixed sizes", name: `client.empty + release (${name})` },
    () => {
      for (let i = 0; i < N; i++) c.empty(4096 + (i & 7) * 256).release();
    },
  );
}

const WGSL = `
@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { dst[g.x] = src[g.x] * 2.0; }`;
const kernel = defineKernel({ name: "double", wgsl: WGSL });
const src = client.create(new Float32Array(SIZE / 4).fill(1));
const layout = storageLayout(device, 2);
const [pipeline] = rawPipelines(device, layout, [WGSL]);
const rawSrc = device.createBuffer({ size: SIZE, usage });
const LAUNCHES = 64;
client.launch(kernel, [1], [src, client.empty(SIZE)]);
await client.sync();

Deno.bench(
  { group: "launch loop with temporaries", name: "raw: createBuffer + bind group per launch", baseline: true },
  () => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    const temps: GPUBuffer[] = [];
    for (let i = 0; i < LAUNCHES; i++) {
      const tmp = device.createBuffer({ size: SIZE, usage });
      temps.push(tmp);
      pass.setBindGroup(
        0,
        device.createBindGroup({
          layout,
          entries: [{ binding: 0, resource: { buffer: rawSrc } }, { binding: 1, resource: { buffer: tmp } }],
        }),
      );
      pass.dispatchWorkgroups(1);
    }
    pass.end();
    device.queue.submit([encoder.finish()]);
    for (const t of temps) t.destroy();
  },
);

Deno.bench({ group: "launch loop with temporaries", name: "client: pooled temporaries" }, async () => {
  for (let i = 0; i < LAUNCHES; i++) {
    const tmp = client.empty(SIZE);
    client.launch(kernel, [1], [src, tmp]);
    tmp.release();
  }
  await client.flush();
});

globalThis.addEventListener("unload", () => client.destroy());

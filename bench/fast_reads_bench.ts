/**
 * Fast reads (issue 19): the client with `fastReads: true` next to the spec
 * path (a client without it) and the raw WebGPU paths, in one process.
 *
 * - "small launch + read round trip": one launch of a 64-float add, then a
 *   read of its 256 B result. Raw spec = dispatch + copy into a reused
 *   staging buffer + awaited `mapAsync`; raw early = the same, mapped early
 *   (no await) from a ring of primed staging buffers, each reused only once
 *   its leftover map has settled: the floor of the fast path.
 * - "200-launch step + read": 200 launches of that add, then a read of one
 *   its 256 B result (PyTorch eager on the H200, reading one float: 1.16 ms, re-measured 1.376 ms p50 in
 *   `torch_ref.py`; a CUDA graph 0.24 ms).
 *
 * The acceptance ratios: client fast at least 50x faster than client spec in
 * the first group, and the step within 2x of PyTorch eager (2.3 ms) on the
 * H200. On the software adapter a submit runs the dispatches on the CPU, so
 * the step's figures there are the software GPU's.
 *
 * Run: `deno bench --allow-env bench/fast_reads_bench.ts`.
 */

import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, EarlyMapRing, rawPipelines, storageLayout } from "./_raw.ts";

const WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { c[g.x] = a[g.x] + b[g.x]; }`;
const add = defineKernel({ name: "add64", wgsl: WGSL });
const N = 64;
const BYTES = N * 4;

const fast = await createClient({ fastReads: true });
const spec = await createClient();
if (!fast.fastReads) console.warn(`fast reads are off: ${fast.server.fastReadsReason}`);

function operands(client: typeof fast) {
  const a = client.create(new Float32Array(N).fill(1));
  const b = client.create(new Float32Array(N).fill(2));
  const c = client.empty(BYTES);
  return { a, b, c, bufs: [a, b, c] };
}
const f = operands(fast);
const s = operands(spec);

// Raw WebGPU on the spec client's device.
const device = spec.server.device;
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const raw = [1, 2, 0].map((v) => {
  const buf = device.createBuffer({ size: BYTES, usage });
  device.queue.writeBuffer(buf, 0, new Float32Array(N).fill(v));
  return buf;
});
const layout = storageLayout(device, 3);
const [pipeline] = rawPipelines(device, layout, [WGSL]);
const bg = bindBuffers(device, layout, raw);
const stagingUsage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
const specStaging = device.createBuffer({ size: BYTES, usage: stagingUsage });
/** Primed staging buffers for the raw early path. */
const ring = await EarlyMapRing.create(device, BYTES, "raw early staging");

function rawEncode(launches: number, staging: GPUBuffer, bytes: number): void {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bg);
  for (let i = 0; i < launches; i++) pass.dispatchWorkgroups(1);
  pass.end();
  encoder.copyBufferToBuffer(raw[2]!, 0, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
}

async function rawSpec(launches: number, bytes: number): Promise<number> {
  rawEncode(launches, specStaging, bytes);
  await specStaging.mapAsync(GPUMapMode.READ, 0, bytes);
  const v = new Float32Array(specStaging.getMappedRange(0, bytes))[0]!;
  specStaging.unmap();
  return v;
}

function rawEarly(launches: number, bytes: number): Promise<number> {
  return ring.read((staging) => rawEncode(launches, staging, bytes), bytes);
}

async function step(client: typeof fast, o: typeof f, launches: number): Promise<number> {
  for (let i = 0; i < launches; i++) client.launch(add, [1], o.bufs);
  return (await client.read(o.c, Float32Array))[0]!;
}

// Warm-up: pipelines, bind groups, staging pools (the fast client primes its staging buffers as it goes).
for (let i = 0; i < 2000; i++) {
  await step(fast, f, 1);
  if (i < 20) await step(spec, s, 1);
}

for (const [group, launches] of [["small launch + read round trip", 1], ["200-launch step + read", 200]] as const) {
  Deno.bench({ group, name: "raw, spec map (await mapAsync)", baseline: true, n: 40 }, async () => {
    await rawSpec(launches, BYTES);
  });
  Deno.bench({ group, name: "raw, early map (primed ring)", n: 400 }, async () => {
    await rawEarly(launches, BYTES);
  });
  Deno.bench({ group, name: "client, spec path", n: 40 }, async () => {
    await step(spec, s, launches);
  });
  Deno.bench({ group, name: "client, fastReads: true", n: 400 }, async () => {
    await step(fast, f, launches);
  });
}

globalThis.addEventListener("unload", () => {
  fast.destroy();
  spec.destroy();
});

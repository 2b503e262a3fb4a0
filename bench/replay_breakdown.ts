/**
 * Graph replay against the raw floor, measured the robust way: the same
 * sequences (L launches alternating two kernels, repeated to about 1,024
 * dispatches) encoded through raw WebGPU, `graph.replay()` and
 * `client.launch`, interleaved rep by rep, reporting the median and p10 host
 * ns per dispatch. Only encoding is timed; submits are outside. A diagnostic
 * script beside `graph_bench.ts`, whose `Deno.bench` figures are noisier on
 * small machines.
 *
 * Run: `deno run --allow-env bench/replay_breakdown.ts` (env `REPS`).
 */

import process from "node:process";
import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, rawPipelines, storageLayout } from "./_raw.ts";

const now = () => Number(process.hrtime.bigint()) / 1e6;
const REPS = Number(Deno.env.get("REPS") ?? 150);
const client = await createClient({ tasksMax: 1 << 20 });
const device = client.server.device;
const WGSL = (body: string) => `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&a)) { ${body} } }`;
const MIX = WGSL("a[g.x] = a[g.x] * 0.5 + b[g.x];");
const COPY = WGSL("b[g.x] = a[g.x];");
const mix = defineKernel({ name: "mix", wgsl: MIX });
const copy = defineKernel({ name: "copy", wgsl: COPY });
const layout = storageLayout(device, 2);
const [rawMix, rawCopy] = rawPipelines(device, layout, [MIX, COPY]);
const a = client.create(new Float32Array(64).fill(1));
const b = client.create(new Float32Array(64).fill(2));
const rawBuffers = [0, 1].map(() => device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE }));
const rawBg = bindBuffers(device, layout, rawBuffers);
const stream = client.server.stream(0);
const one = [1];
const ab = [a, b];

for (const length of [1, 10, 100, 1000]) {
  const reps = Math.ceil(1024 / length);
  const total = reps * length;
  const sequence = () => {
    for (let i = 0; i < length; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
  };
  const graph = await client.capture(sequence);
  await client.sync();
  const r: Record<string, number[]> = { raw: [], replay: [], launch: [] };
  const variants: Record<string, () => void> = {
    raw: () => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      let last: GPUComputePipeline | null = null;
      const t0 = now();
      for (let k = 0; k < reps; k++) {
        for (let i = 0; i < length; i++) {
          const p = i % 2 === 0 ? rawMix : rawCopy;
          if (p !== last) {
            pass.setPipeline(p);
            last = p;
          }
          pass.setBindGroup(0, rawBg);
          pass.dispatchWorkgroups(1);
        }
      }
      r.raw!.push(((now() - t0) / total) * 1e6);
      pass.end();
      device.queue.submit([encoder.finish()]);
    },
    replay: () => {
      const t0 = now();
      for (let k = 0; k < reps; k++) graph.replay();
      r.replay!.push(((now() - t0) / total) * 1e6);
      stream.submit();
    },
    launch: () => {
      const t0 = now();
      for (let k = 0; k < reps; k++) sequence();
      r.launch!.push(((now() - t0) / total) * 1e6);
      stream.submit();
    },
  };
  const order = Object.keys(variants);
  for (let rep = 0; rep < REPS; rep++) {
    // Rotate the order so no variant always runs right after the largest submit.
    for (let j = 0; j < order.length; j++) variants[order[(rep + j) % order.length]!]!();
  }
  await client.sync();
  const med = (v: number[]) => v.sort((x, y) => x - y)[v.length >> 1]!;
  const p10 = (v: number[]) => v.sort((x, y) => x - y)[Math.floor(v.length * 0.1)]!;
  const raw = med(r.raw!);
  console.log(
    `L=${String(length).padEnd(5)} raw ${raw.toFixed(0).padStart(4)} ns/dispatch (p10 ${p10(r.raw!).toFixed(0)}), ` +
      `replay ${med(r.replay!).toFixed(0).padStart(4)} (p10 ${p10(r.replay!).toFixed(0)}, ×${
        (med(r.replay!) / raw).toFixed(2)
      }), ` +
      `launch ${med(r.launch!).toFixed(0).padStart(4)} (p10 ${p10(r.launch!).toFixed(0)}, ×${
        (med(r.launch!) / raw).toFixed(2)
      })`,
  );
  graph.destroy();
}
client.destroy();

/**
 * Where a launch's host time goes: the same 1,024-launch loop of a tiny kernel
 * through each layer (raw WebGPU, `stream.dispatch.launch`, `server.launchRaw`,
 * `client.launch`), interleaved rep by rep, with median and p10 ns per launch.
 * A diagnostic script, not a `Deno.bench` file.
 *
 * Run: `deno run --allow-env bench/launch_breakdown.ts` (env `N`, `REPS`).
 */

import process from "node:process";
import { createClient, defineKernel } from "../mod.ts";
import type { PipelineEntry } from "../src/kernel/pipeline_cache.ts";
import { bindBuffers, interleave, rawPipelines, storageLayout } from "./_raw.ts";

const now = () => Number(process.hrtime.bigint()) / 1e6;
const N = Number(Deno.env.get("N") ?? 1024);
const REPS = Number(Deno.env.get("REPS") ?? 200);
const client = await createClient({ tasksMax: 1 << 20 });
const device = client.server.device;
const WGSL = `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }`;
const k = defineKernel({ name: "tiny", wgsl: WGSL });
const x = client.create(new Uint32Array(64));
const one = [1];
const bufs = [x];
client.launch(k, one, bufs);
await client.sync();
const layout = storageLayout(device, 1);
const [pipe] = rawPipelines(device, layout, [WGSL]);
const bg = bindBuffers(device, layout, [device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE })]);
const server = client.server;
const stream = server.stream(0);
const entry = k.compiled.slots[2] as PipelineEntry;
const results: Record<string, number[]> = {
  "raw WebGPU": [],
  "stream.dispatch.launch": [],
  "server.launchRaw": [],
  "client.launch": [],
  "client.launch (literals)": [],
};
const rec = (name: string, ms: number) => (results[name] ??= []).push((ms / N) * 1e6);

const variants: [string, () => void][] = [
  ["raw WebGPU", () => {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipe);
    const t0 = now();
    for (let i = 0; i < N; i++) {
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(1);
    }
    rec("raw WebGPU", now() - t0);
    pass.end();
    device.queue.submit([enc.finish()]);
  }],
  ["stream.dispatch.launch", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) stream.dispatch.launch(entry, bufs, null, 1, 1, 1, null);
    rec("stream.dispatch.launch", now() - t0);
    stream.submit();
  }],
  ["server.launchRaw", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) server.launchRaw(k, bufs, null, 1, 1, 1, null, "execute", 0);
    rec("server.launchRaw", now() - t0);
    stream.submit();
  }],
  ["client.launch", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) client.launch(k, one, bufs);
    rec("client.launch", now() - t0);
    stream.submit();
  }],
  ["client.launch (literals)", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) client.launch(k, [1], [x]);
    rec("client.launch (literals)", now() - t0);
    stream.submit();
  }],
];
const byName = new Map(variants);
interleave([...byName.keys()], REPS, (name) => byName.get(name)!());
await client.sync();
for (const [name, v] of Object.entries(results)) {
  v.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(26)} median ${v[v.length >> 1]!.toFixed(0).padStart(5)} ns/launch, p10 ${
      v[Math.floor(v.length * 0.1)]!.toFixed(0).padStart(5)
    }`,
  );
}
client.destroy();

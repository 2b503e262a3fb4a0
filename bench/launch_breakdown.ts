/**
 * Where a launch's host time goes: the same 1,024-launch loop through each
 * layer (raw WebGPU, `stream.dispatch.launch`, `server.launchRaw`,
 * `client.launch`), interleaved rep by rep, with median and p10 ns per launch.
 * A diagnostic script, not a `Deno.bench` file.
 *
 * `SHAPE=tiny` (the default): one buffer, no info words. `SHAPE=add3`: three
 * buffers and one info word (the H200 gaps' shape); its raw loop sets the
 * pipeline and a bind group with the info bound statically on every launch.
 * `SUBMIT=1` also times the submit (the stream's, or the raw loop's
 * `finish` + `submit`), so each figure is the cost until submitted.
 *
 * `TASKS_MAX` sets the client's `tasksMax` (default: above `N`, so the
 * client submits only where the loop ends); with `SUBMIT=1` and the default
 * `tasksMax` (512) and `N=20000`, this is the gaps' static group, interleaved.
 *
 * Run: `deno run --allow-env bench/launch_breakdown.ts` (env `N`, `REPS`, `SHAPE`, `SUBMIT`, `TASKS_MAX`).
 */

import process from "node:process";
import { createClient, defineKernel } from "../mod.ts";
import type { PipelineEntry } from "../src/kernel/pipeline_cache.ts";
import { bindBuffers, interleave, rawPipelines, storageLayout, TINY_WGSL } from "./_raw.ts";

const now = () => Number(process.hrtime.bigint()) / 1e6;
const N = Number(Deno.env.get("N") ?? 1024);
const REPS = Number(Deno.env.get("REPS") ?? 200);
const TASKS_MAX = Deno.env.get("TASKS_MAX");
// By default the client never submits inside a loop; TASKS_MAX=512 (say) gives the default cadence.
const client = await createClient({ tasksMax: TASKS_MAX === undefined ? 1 << 20 : Number(TASKS_MAX) });
const device = client.server.device;
const SHAPE = Deno.env.get("SHAPE") ?? "tiny";
const SUBMIT = Deno.env.get("SUBMIT") === "1";
const ADD3 = SHAPE === "add3";
const WGSL = ADD3
  ? `@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < n) { c[g.x] = a[g.x] + b[g.x]; } }`
  : TINY_WGSL;
const k = defineKernel({ name: SHAPE, wgsl: WGSL });
const x = client.create(new Uint32Array(64));
const INDIRECT = Deno.env.get("INDIRECT") === "1";
// With INDIRECT=1 every launch reads its count from memory: the client's from `createCount`, the raw loop's from a
// buffer of its own (the layers below the client take the count's binding).
const count = client.createCount(1, 1, 1);
const one = INDIRECT ? count : [1];
const bufs = ADD3 ? [x, client.create(new Uint32Array(64)), client.create(new Uint32Array(64))] : [x];
const info = ADD3 ? new Uint32Array([64]) : null;
client.launch(k, one, bufs, info ?? undefined);
await client.sync();
const storage = (size: number) =>
  device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
const layout = ADD3
  ? device.createBindGroupLayout({
    entries: [0, 1, 2, 3].map((binding) => ({
      binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: binding === 3 ? "read-only-storage" as const : "storage" as const },
    })),
  })
  : storageLayout(device, 1);
const [pipe] = rawPipelines(device, layout, [WGSL]);
const infoBuffer = storage(4);
device.queue.writeBuffer(infoBuffer, 0, new Uint32Array([64]));
const bg = bindBuffers(device, layout, ADD3 ? [storage(256), storage(256), storage(256), infoBuffer] : [storage(256)]);
const rawCount = device.createBuffer({ size: 12, usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST });
device.queue.writeBuffer(rawCount, 0, new Uint32Array([1, 1, 1]));
const server = client.server;
const stream = server.stream(0);
const entry = k.compiled.slots.find((e) => e !== undefined) as PipelineEntry;
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
      if (ADD3) pass.setPipeline(pipe);
      pass.setBindGroup(0, bg);
      if (INDIRECT) pass.dispatchWorkgroupsIndirect(rawCount, 0);
      else pass.dispatchWorkgroups(1);
    }
    if (SUBMIT) {
      pass.end();
      device.queue.submit([enc.finish()]);
    }
    rec("raw WebGPU", now() - t0);
    if (!SUBMIT) {
      pass.end();
      device.queue.submit([enc.finish()]);
    }
  }],
  ["stream.dispatch.launch", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) stream.dispatch.launch(entry, bufs, info, 1, 1, 1, INDIRECT ? count : null);
    if (SUBMIT) stream.submit();
    rec("stream.dispatch.launch", now() - t0);
    stream.submit();
  }],
  ["server.launchRaw", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) server.launchRaw(k, bufs, info, 1, 1, 1, INDIRECT ? count : null, "execute", 0);
    if (SUBMIT) stream.submit();
    rec("server.launchRaw", now() - t0);
    stream.submit();
  }],
  ["client.launch", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) client.launch(k, one, bufs, info ?? undefined);
    if (SUBMIT) stream.submit();
    rec("client.launch", now() - t0);
    stream.submit();
  }],
  ["client.launch (literals)", () => {
    const t0 = now();
    for (let i = 0; i < N; i++) {
      client.launch(k, INDIRECT ? count : [1], ADD3 ? [x, bufs[1]!, bufs[2]!] : [x], info ?? undefined);
    }
    if (SUBMIT) stream.submit();
    rec("client.launch (literals)", now() - t0);
    stream.submit();
  }],
];
// SWEEP=256,512,1024: clients of the same device with these tasksMax values, each on its own
// buffers, interleaved with the rest (a submit cadence compared in one process).
for (const t of (Deno.env.get("SWEEP") ?? "").split(",").filter(Boolean).map(Number)) {
  const c = await createClient({ device, tasksMax: t });
  const cb = bufs.map((b) => c.create(new Uint8Array(b.sizeInUse)));
  const cs = c.server.stream(0);
  const cOne = INDIRECT ? c.createCount(1, 1, 1) : [1];
  const name = `client.launch, tasksMax ${t}`;
  c.launch(k, cOne, cb, info ?? undefined);
  await c.sync();
  variants.push([name, () => {
    const t0 = now();
    for (let i = 0; i < N; i++) c.launch(k, cOne, cb, info ?? undefined);
    if (SUBMIT) cs.submit();
    rec(name, now() - t0);
    cs.submit();
  }]);
}
const byName = new Map(variants);
interleave([...byName.keys()], REPS, (name) => byName.get(name)!());
await client.sync();
console.log(
  `shape ${SHAPE}${
    SUBMIT ? ", until submitted" : ", submits outside the timed loop"
  }, ${N} launches, client tasksMax ${client.server.settings.tasksMax}`,
);
for (const [name, v] of Object.entries(results)) {
  v.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(26)} median ${v[v.length >> 1]!.toFixed(0).padStart(5)} ns/launch, p10 ${
      v[Math.floor(v.length * 0.1)]!.toFixed(0).padStart(5)
    }`,
  );
}
client.destroy();

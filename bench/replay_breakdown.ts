/**
 * Graph replay against the raw floor, measured the robust way: the same
 * sequences (L launches alternating two kernels, repeated to about 1,024
 * dispatches) encoded through raw WebGPU, `graph.replay()` and
 * `client.launch`, interleaved rep by rep in a shuffled order (`interleave`
 * in `_raw.ts`), reporting the minimum, p10 and
 * median host ns per dispatch. Two raw loops: the floor (`setBindGroup` at
 * every dispatch) and the floor with repeated binds skipped (the saving the
 * runtime makes; it differs from the floor only at L = 1).
 *
 * Only encoding is timed; submits are outside, and after each submit the
 * script blocks until the device is idle and done with its post-completion
 * work (`blockUntilIdle`), so that on the software adapter (whose "device" is
 * the same CPU cores) the execution of one variant's dispatches never
 * overlaps the next variant's timed encoding. A diagnostic
 * script beside `graph_bench.ts`.
 *
 * Run: `deno run --allow-env bench/replay_breakdown.ts` (env `REPS`, default 300).
 */

import process from "node:process";
import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, blockUntilIdle, encodeAlternating, interleave, rawPipelines, storageLayout } from "./_raw.ts";

const now = () => Number(process.hrtime.bigint()) / 1e6;
const REPS = Number(Deno.env.get("REPS") ?? 300);
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
const pipelines = rawPipelines(device, layout, [MIX, COPY]);
const a = client.create(new Float32Array(64).fill(1));
const b = client.create(new Float32Array(64).fill(2));
const rawBuffers = [0, 1].map(() => device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE }));
const rawBg = bindBuffers(device, layout, rawBuffers);
const stream = client.server.stream(0);
const one = [1];
const ab = [a, b];

/** Times one raw encoding of `total` dispatches into a fresh pass, in ns per dispatch. */
function rawLoop(reps: number, length: number, skipRepeatedBinds: boolean): number {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const t0 = now();
  encodeAlternating(pass, { pipelines, bindGroup: rawBg, reps, length, groups: 1, skipRepeatedBinds });
  const ns = ((now() - t0) / (reps * length)) * 1e6;
  pass.end();
  device.queue.submit([encoder.finish()]);
  blockUntilIdle(device);
  return ns;
}

/** Times `encode`, then submits the stream and waits for an idle device, in ns per dispatch. */
function clientLoop(total: number, encode: () => void): number {
  const t0 = now();
  encode();
  const ns = ((now() - t0) / total) * 1e6;
  stream.submit();
  blockUntilIdle(device);
  return ns;
}

const quantile = (v: number[], q: number) => [...v].sort((x, y) => x - y)[Math.floor((v.length - 1) * q)]!;
const fmt = (x: number) => x.toFixed(0).padStart(4);

for (const length of [1, 10, 100, 1000]) {
  const reps = Math.ceil(1024 / length);
  const total = reps * length;
  const sequence = () => {
    for (let i = 0; i < length; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
  };
  const graph = await client.capture(sequence);
  await client.sync();
  const variants: Record<string, () => number> = {
    raw: () => rawLoop(reps, length, false),
    rawSkip: () => rawLoop(reps, length, true),
    replay: () =>
      clientLoop(total, () => {
        for (let k = 0; k < reps; k++) graph.replay();
      }),
    launch: () =>
      clientLoop(total, () => {
        for (let k = 0; k < reps; k++) sequence();
      }),
  };
  const names = Object.keys(variants);
  const r: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  interleave(names, REPS, (name) => r[name]!.push(variants[name]!()));
  await client.sync();
  for (const [label, q] of [["min", 0], ["p10", 0.1], ["median", 0.5]] as const) {
    const raw = quantile(r.raw!, q);
    const skip = quantile(r.rawSkip!, q);
    const replay = quantile(r.replay!, q);
    const launch = quantile(r.launch!, q);
    console.log(
      `L=${String(length).padEnd(4)} ${label.padEnd(6)} ns/dispatch: raw ${fmt(raw)}, raw skipping ${fmt(skip)}, ` +
        `replay ${fmt(replay)} (×${(replay / raw).toFixed(2)} raw, ×${(replay / skip).toFixed(2)} skipping), ` +
        `launch ${fmt(launch)} (×${(launch / raw).toFixed(2)} raw)`,
    );
  }
  graph.destroy();
}
client.destroy();

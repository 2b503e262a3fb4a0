/**
 * The README's figures, measured in one process on one device: the runtime
 * next to raw WebGPU and, when its bundle loads, tfjs-backend-webgpu.
 *
 * - **launch**: host µs per launch of a one-workgroup kernel, 20,000 launches
 *   timed until everything is submitted (raw: one open pass, a cached bind
 *   group, a submit every 512 launches, as the runtime's default `tasksMax`;
 *   tfjs: `tf.add` of 64 floats, each result disposed, until its queue is
 *   flushed). Median of `REPS`.
 * - **read**: ms for one small launch and a read of its 256 B result (the
 *   runtime with `fastReads: true`; raw: an early map of a primed staging
 *   buffer; tfjs: `data()` after an add), 1,000 rounds: p50, p90, p99, max.
 * - **step**: ms for 200 dependent launches and a read of 256 B (same three,
 *   and the runtime's `graph.replay()` of them), 200 rounds each, the
 *   runtime's, the replay's and the raw ones interleaved: p50.
 *
 * Prints a table and, with `OUT=dir`, writes `dir/figures.json` (what
 * `bench/figures.json` collects beside PyTorch's `torch_ref.py` and the
 * autotuned matmul of `autotune_bench.ts`; `bench/chart.ts` draws it).
 *
 * tfjs, bench-only and never a dependency of the module, is loaded from
 * `TFJS` (default `.device/tfjs.bundle.js`; how to make it: see
 * `autotune_bench.ts`); without it its column is empty.
 *
 * Run: `deno run --allow-env --allow-read --allow-write bench/figures.ts`.
 *
 * @module
 */

import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, EarlyMapRing, interleave, median, rawPipelines, storageLayout, TINY_WGSL } from "./_raw.ts";

const env = (k: string) =>
  Deno.permissions.querySync({ name: "env", variable: k }).state === "granted" ? Deno.env.get(k) : undefined;
const REPS = Number(env("REPS") ?? 7);
const LAUNCHES = 20_000;
const ROUNDS = Number(env("ROUNDS") ?? 1000);
const STEPS = Number(env("STEPS") ?? 200);

const ADD_WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { c[g.x] = a[g.x] + b[g.x]; }`;
const N = 64;
const BYTES = N * 4;

const client = await createClient({ fastReads: true });
const device = client.server.device;
if (!client.fastReads) console.warn(`fast reads are off: ${client.server.fastReadsReason}`);
const tiny = defineKernel({ name: "tiny", wgsl: TINY_WGSL });
const add = defineKernel({ name: "add64", wgsl: ADD_WGSL });

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

// ---- launch: host µs per launch, until submitted ----
const x = client.create(new Uint32Array(64));
const xs = [x];
const one = [1];
const tinyLayout = storageLayout(device, 1, { label: "figures raw layout" });
const [tinyPipeline] = rawPipelines(device, tinyLayout, [TINY_WGSL], "figures raw pipeline");
const rawX = device.createBuffer({ label: "figures raw x", size: 256, usage: GPUBufferUsage.STORAGE });
const tinyBg = bindBuffers(device, tinyLayout, [rawX], "figures raw bind group");

function rawLaunches(): number {
  const t0 = performance.now();
  let encoder = device.createCommandEncoder({ label: "figures raw encoder" });
  let pass = encoder.beginComputePass({ label: "figures raw pass" });
  pass.setPipeline(tinyPipeline!);
  for (let i = 0; i < LAUNCHES; i++) {
    pass.setBindGroup(0, tinyBg);
    pass.dispatchWorkgroups(1);
    if ((i + 1) % 512 === 0) {
      pass.end();
      device.queue.submit([encoder.finish()]);
      encoder = device.createCommandEncoder({ label: "figures raw encoder" });
      pass = encoder.beginComputePass({ label: "figures raw pass" });
      pass.setPipeline(tinyPipeline!);
    }
  }
  pass.end();
  device.queue.submit([encoder.finish()]);
  return (performance.now() - t0) * 1000 / LAUNCHES;
}

async function runtimeLaunches(): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < LAUNCHES; i++) client.launch(tiny, one, xs);
  const flushed = client.flush();
  const us = (performance.now() - t0) * 1000 / LAUNCHES;
  await flushed;
  return us;
}

// ---- tfjs, when its bundle loads ----
// deno-lint-ignore no-explicit-any
type Tf = any;
let tf: Tf = null;
try {
  const bundle = env("TFJS") ?? ".device/tfjs.bundle.js";
  tf = (await import(new URL(bundle, `file://${Deno.cwd()}/`).href)).tf;
  await tf.setBackend("webgpu");
  await tf.ready();
} catch (e) {
  console.warn(`tfjs not loaded (${(e as Error).message.split("\n")[0]}): its column stays empty`);
  tf = null;
}

async function tfLaunches(): Promise<number> {
  const a = tf.ones([N]);
  const b = tf.ones([N]);
  const n = 2000; // tfjs is slower per op: fewer launches
  const t0 = performance.now();
  for (let i = 0; i < n; i++) tf.add(a, b).dispose();
  const us = (performance.now() - t0) * 1000 / n;
  const last = tf.add(a, b);
  await last.data();
  last.dispose();
  a.dispose();
  b.dispose();
  return us;
}

// ---- read and step ----
const a = client.create(new Float32Array(N).fill(1));
const b = client.create(new Float32Array(N).fill(2));
const c = client.empty(BYTES);
const bufs = [a, b, c];
async function runtimeStep(launches: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < launches; i++) client.launch(add, one, bufs);
  const v = (await client.read(c, Float32Array))[0]!;
  if (v !== 3) throw new Error(`runtime read ${v}, want 3`);
  return performance.now() - t0;
}

const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const raw = [1, 2, 0].map((v, i) => {
  const buf = device.createBuffer({ label: `figures raw operand ${i}`, size: BYTES, usage });
  device.queue.writeBuffer(buf, 0, new Float32Array(N).fill(v));
  return buf;
});
const addLayout = storageLayout(device, 3, { label: "figures raw add layout" });
const [addPipeline] = rawPipelines(device, addLayout, [ADD_WGSL], "figures raw add pipeline");
const addBg = bindBuffers(device, addLayout, raw, "figures raw add bind group");
const ring = await EarlyMapRing.create(device, BYTES, "figures raw staging");
async function rawStep(launches: number): Promise<number> {
  const t0 = performance.now();
  const v = await ring.read((staging) => {
    const encoder = device.createCommandEncoder({ label: "figures raw step encoder" });
    const pass = encoder.beginComputePass({ label: "figures raw step pass" });
    pass.setPipeline(addPipeline!);
    pass.setBindGroup(0, addBg);
    for (let i = 0; i < launches; i++) pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(raw[2]!, 0, staging, 0, BYTES);
    device.queue.submit([encoder.finish()]);
  }, BYTES);
  if (v !== 3) throw new Error(`raw read ${v}, want 3`);
  return performance.now() - t0;
}

async function tfStep(launches: number): Promise<number> {
  const ta = tf.ones([N]);
  const tb = tf.fill([N], 2);
  const t0 = performance.now();
  let acc = tf.add(ta, tb);
  for (let i = 1; i < launches; i++) {
    const nextAcc = tf.add(acc, tb);
    acc.dispose();
    acc = nextAcc;
  }
  const v = (await acc.data())[0];
  const ms = performance.now() - t0;
  acc.dispose();
  ta.dispose();
  tb.dispose();
  if (v !== 1 + 2 * launches) throw new Error(`tfjs read ${v}, want ${1 + 2 * launches}`);
  return ms;
}

/** Runs `fn` `n` times after `warm` untimed runs; returns the samples. */
async function samples(n: number, warm: number, fn: () => number | Promise<number>): Promise<number[]> {
  for (let i = 0; i < warm; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

const result: Record<string, Record<string, number | null>> = { launch: {}, read: {}, step: {} };
// Launch: interleaved reps.
const launch = { raw: [] as number[], runtime: [] as number[], tfjs: [] as number[] };
await runtimeLaunches();
rawLaunches();
await device.queue.onSubmittedWorkDone();
if (tf) await tfLaunches();
for (let rep = 0; rep < REPS; rep++) {
  launch.raw.push(rawLaunches());
  await device.queue.onSubmittedWorkDone();
  launch.runtime.push(await runtimeLaunches());
  if (tf) launch.tfjs.push(await tfLaunches());
}
result.launch = {
  raw_us: median(launch.raw),
  runtime_us: median(launch.runtime),
  tfjs_us: tf ? median(launch.tfjs) : null,
};

const readRuntime = await samples(ROUNDS, 200, () => runtimeStep(1));
const readRaw = await samples(ROUNDS, 200, () => rawStep(1));
const readTf = tf ? await samples(Math.min(ROUNDS, 200), 20, () => tfStep(1)) : [];
result.read = {
  runtime_p50_ms: quantile(readRuntime, 0.5),
  runtime_p90_ms: quantile(readRuntime, 0.9),
  runtime_p99_ms: quantile(readRuntime, 0.99),
  runtime_max_ms: Math.max(...readRuntime),
  runtime_over_1ms: readRuntime.filter((t) => t > 1).length,
  raw_p50_ms: quantile(readRaw, 0.5),
  tfjs_p50_ms: tf ? quantile(readTf, 0.5) : null,
};
// Where the step's time goes: the host's encoding of 200 launches, the device's time for them, and a replay of them.
const encode = await samples(STEPS, 20, async () => {
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) client.launch(add, one, bufs);
  const ms = performance.now() - t0;
  await client.sync();
  return ms;
});
const profiled = await client.profile(() => {
  for (let i = 0; i < 200; i++) client.launch(add, one, bufs);
});
const graph = await client.capture(() => {
  for (let i = 0; i < 200; i++) client.launch(add, one, bufs);
});
async function replayStep(): Promise<number> {
  const t0 = performance.now();
  graph.replay();
  const v = (await client.read(c, Float32Array))[0]!;
  if (v !== 3) throw new Error(`replay read ${v}, want 3`);
  return performance.now() - t0;
}
// The runtime's step, its replay and the raw step interleaved, round by round in a shuffled order: measured one after
// another, the first (on an H100, the runtime's) met the device in another state (clocks) than the later ones.
const stepSides: Record<string, () => Promise<number>> = {
  runtime: () => runtimeStep(200),
  replay: replayStep,
  raw: () => rawStep(200),
};
const stepTimes: Record<string, number[]> = { runtime: [], replay: [], raw: [] };
for (const side of Object.values(stepSides)) for (let i = 0; i < 20; i++) await side();
const stepOrder: string[] = [];
interleave(Object.keys(stepSides), STEPS, (name) => stepOrder.push(name));
for (const name of stepOrder) stepTimes[name]!.push(await stepSides[name]!());
graph.destroy();
const stepRuntime = stepTimes.runtime!;
const stepReplay = stepTimes.replay!;
const stepRaw = stepTimes.raw!;
const stepTf = tf ? await samples(Math.min(STEPS, 40), 5, () => tfStep(200)) : [];
result.step = {
  runtime_p50_ms: quantile(stepRuntime, 0.5),
  runtime_min_ms: Math.min(...stepRuntime),
  replay_p50_ms: quantile(stepReplay, 0.5),
  encode_p50_ms: quantile(encode, 0.5),
  device_ms: profiled.nanos / 1e6,
  raw_p50_ms: quantile(stepRaw, 0.5),
  tfjs_p50_ms: tf ? quantile(stepTf, 0.5) : null,
};

const adapter = client.properties.identity.description;
const f = (v: number | null | undefined, d = 3) => v === null || v === undefined ? "-" : v.toFixed(d);
console.log(`figures on ${adapter}, ${Deno.version.deno}, fastReads ${client.fastReads}`);
console.log(
  `launch host us: raw ${f(result.launch.raw_us)}, runtime ${f(result.launch.runtime_us)}, tfjs ${
    f(result.launch.tfjs_us)
  }`,
);
console.log(
  `small read ms: runtime p50 ${f(result.read.runtime_p50_ms)} p90 ${f(result.read.runtime_p90_ms)} p99 ${
    f(result.read.runtime_p99_ms)
  } max ${f(result.read.runtime_max_ms)} (${result.read.runtime_over_1ms} of ${ROUNDS} over 1 ms); raw early p50 ${
    f(result.read.raw_p50_ms)
  }; tfjs p50 ${f(result.read.tfjs_p50_ms)}`,
);
console.log(
  `200-launch step + read ms p50: runtime ${f(result.step.runtime_p50_ms)} (min ${f(result.step.runtime_min_ms)}), ` +
    `raw early ${f(result.step.raw_p50_ms)}, graph.replay() ${f(result.step.replay_p50_ms)}, tfjs ${
      f(result.step.tfjs_p50_ms)
    }; host encode of the 200 launches ${f(result.step.encode_p50_ms)} ms, device time of the 200 ${
      f(result.step.device_ms)
    } ms (${profiled.duration.method} timing)`,
);
const out = env("OUT");
if (out) {
  await Deno.writeTextFile(
    `${out}/figures.json`,
    JSON.stringify({ adapter, deno: Deno.version.deno, date: new Date().toISOString(), ...result }, null, 2),
  );
}
client.destroy();
Deno.exit(0);

/**
 * The main thread's event loop while a long kernel runs and is read back:
 * a 1 ms `setInterval` records every tick, and the longest gap between two
 * ticks is reported, for a main-thread `ComputeClient` and a `WorkerClient`
 * in turn (same kernel, same process, each on its own device). Deno's
 * `mapAsync` blocks the thread that calls it until the device is idle, so
 * with the main-thread client the gap is about the kernel's length; with the
 * worker client the main thread only waits for a message.
 *
 * The kernel runs `ITER` (default 60,000) iterations of an LCG per
 * invocation: under llvmpipe's limit of 65,535 loop iterations per
 * invocation, so the length comes from the number of workgroups, which is
 * calibrated until one launch takes `TARGET_MS` (default 400) on this
 * device. Every result is checked against the CPU at sampled invocations.
 *
 * Run: `deno run --allow-env --allow-read bench/worker_gap.ts` (read access
 * lets the Worker load the runtime's modules). `REPS` (default 3) runs per
 * client, interleaved; `OUT=<dir>` also writes `worker_gap.json` there (add
 * `--allow-write`).
 */

import { type ComputeClient, createClient, defineKernel, type WorkerClient } from "../mod.ts";

const env = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const ITER = env("ITER", 60_000);
const TARGET_MS = env("TARGET_MS", 400);
const REPS = env("REPS", 3);
const WG = 64;

const spin = defineKernel({
  name: "spin",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> info: array<u32, 2>; // iterations, row width in invocations
@compute @workgroup_size(${WG}) fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x + g.y * info[1];
  var acc = i;
  for (var k = 0u; k < info[0]; k++) { acc = acc * 1664525u + 1013904223u; }
  if (i < arrayLength(&out)) { out[i] = acc; }
}`,
});

/** The kernel's value at invocation `i` (the CPU reference). */
function expected(i: number): number {
  let acc = i >>> 0;
  for (let k = 0; k < ITER; k++) acc = (Math.imul(acc, 1664525) + 1013904223) >>> 0;
  return acc;
}

type Client = ComputeClient | WorkerClient;
const OUT_WORDS = 1 << 16;

/** Launches `groups` workgroups (as a 2-D grid) and waits for the result. */
async function run(client: Client, out: ReturnType<Client["empty"]>, groups: number): Promise<Uint32Array> {
  const x = Math.min(groups, 32768);
  const y = Math.ceil(groups / x);
  client.launch(spin, [x, y], [out], new Uint32Array([ITER, x * WG]));
  return await client.read(out, Uint32Array);
}

/** Doubles the workgroups until one launch takes a quarter of the target, then scales to the target. */
async function calibrate(client: Client, out: ReturnType<Client["empty"]>): Promise<number> {
  await run(client, out, 1); // compiles the pipeline
  let groups = 1;
  for (;;) {
    const t0 = performance.now();
    await run(client, out, groups);
    const ms = performance.now() - t0 - 11; // a read's fixed wait on Deno
    if (ms > TARGET_MS / 4 || groups >= 1 << 24) return Math.max(1, Math.round(groups * TARGET_MS / Math.max(ms, 1)));
    groups *= 2;
  }
}

interface Row {
  client: string;
  kernelAndReadMs: number;
  maxGapMs: number;
  ticks: number;
  idleMaxGapMs: number;
}

/** Runs the long kernel and its read while a 1 ms interval ticks; returns the longest gap while it ran. */
async function measure(kind: string, client: Client, out: ReturnType<Client["empty"]>, groups: number): Promise<Row> {
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(performance.now()), 1);
  await new Promise((r) => setTimeout(r, 100)); // idle ticks first
  const start = performance.now();
  const got = await run(client, out, groups);
  const end = performance.now();
  await new Promise((r) => setTimeout(r, 20));
  clearInterval(timer);
  const last = Math.min(groups * WG, OUT_WORDS) - 1;
  for (const i of [0, 1, last >> 1, last]) {
    if (got[i] !== expected(i)) throw new Error(`${kind}: out[${i}] = ${got[i]}, expected ${expected(i)}`);
  }
  const gaps = (from: number, to: number) => {
    const t = [from, ...ticks.filter((x) => x > from && x < to), to];
    return Math.max(...t.slice(1).map((x, i) => x - t[i]!));
  };
  return {
    client: kind,
    kernelAndReadMs: end - start,
    maxGapMs: gaps(start, end),
    ticks: ticks.filter((x) => x > start && x < end).length,
    idleMaxGapMs: gaps(start - 90, start),
  };
}

const main = await createClient();
const worker = await createClient({ worker: true });
const outs = { main: main.empty(OUT_WORDS * 4), worker: worker.empty(OUT_WORDS * 4) };
const groups = await calibrate(main, outs.main);
await run(worker, outs.worker, groups); // compile and warm the worker's device too
const rows: Row[] = [];
for (let rep = 0; rep < REPS; rep++) {
  rows.push(await measure("main-thread client", main, outs.main, groups));
  rows.push(await measure("worker client", worker, outs.worker, groups));
}
console.log(`${main.properties.identity.description}: ${groups} workgroups × ${WG} invocations × ${ITER} iterations`);
console.log("client              | kernel + read | longest gap | ticks | longest gap before (idle)");
for (const r of rows) {
  console.log(
    `${r.client.padEnd(19)} | ${r.kernelAndReadMs.toFixed(1).padStart(10)} ms | ${
      r.maxGapMs.toFixed(2).padStart(8)
    } ms | ${String(r.ticks).padStart(5)} | ${r.idleMaxGapMs.toFixed(2)} ms`,
  );
}
const out = Deno.env.get("OUT");
if (out !== undefined) {
  await Deno.writeTextFile(`${out}/worker_gap.json`, JSON.stringify({ groups, iterations: ITER, rows }, null, 2));
}
main.destroy();
worker.destroy();
await worker.ended;

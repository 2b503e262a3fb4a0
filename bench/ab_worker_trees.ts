/**
 * The worker client's launch cost to the main thread, this tree against
 * another copy, in one process: each build starts its own worker client, and
 * each iteration times only the main thread writing `N` launches into the
 * command ring (two kernels alternating, two buffers, a four-word info block
 * that changes every launch), then waits untimed until the worker ran them
 * (`sync`). Iterations stay below the ring's size, so no record spills. Builds
 * are timed interleaved, in a fresh shuffled order each round, as
 * `ab_trees.ts` times the main-thread client.
 *
 * ```
 * mkdir -p .device/old && git archive <rev> mod.ts src | tar -x -C .device/old
 * OLD=.device/old deno run --allow-env --allow-read bench/ab_worker_trees.ts
 * ```
 * (env `N`, default 2,048 launches per iteration; `ROUNDS`, default 30;
 * `BLOCK`, default 10; `WARMUP`, default 30.)
 */

import * as NEW from "../mod.ts";
import { formatPaired, importTree, interleave, mean, median, pairedRatio } from "./_raw.ts";

type Runtime = typeof NEW;
const oldPath = Deno.env.get("OLD");
if (!oldPath) {
  console.error("ab_worker_trees: set OLD to the other tree's root (a folder holding its mod.ts)");
  Deno.exit(2);
}
const OLD = await importTree(oldPath);

const N = Number(Deno.env.get("N") ?? 2048);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 30);
const BLOCK = Number(Deno.env.get("BLOCK") ?? 10);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 30);
const WGSL = (body: string) => `
struct P { a: f32, b: f32, c: u32, d: u32 }
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&a)) { ${body} }
}`;

/** One build's worker client and its timed loop (ms of main-thread time per iteration). */
async function build(runtime: Runtime) {
  const client = await runtime.createClient({ worker: true, tasksMax: 4096 });
  const mix = runtime.defineKernel({ name: "mix", wgsl: WGSL("a[g.x] = a[g.x] * p.a + b[g.x] * p.b;") });
  const copy = runtime.defineKernel({ name: "copy", wgsl: WGSL("b[g.x] = a[g.x] + p.a;") });
  const ab = [client.create(new Float32Array(64).fill(1)), client.create(new Float32Array(64).fill(2))];
  const info = new Uint32Array(4);
  const one = [1];
  let step = 0;
  const loop = async () => {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      info[0] = step++;
      client.launch(i % 2 === 0 ? mix : copy, one, ab, info);
    }
    const ms = performance.now() - t0;
    await client.sync();
    return ms;
  };
  return { client, loop };
}

const builds = { "this tree": await build(NEW), "other tree": await build(OLD) };
const names = Object.keys(builds) as (keyof typeof builds)[];
const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const rounds: Record<string, number[][]> = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) for (let i = 0; i < WARMUP; i++) await builds[name].loop();
// interleave runs its callback synchronously: collect the order, then run it.
const order: string[] = [];
interleave(names, ROUNDS, (name) => order.push(name));
for (const name of order) {
  const block: number[] = [];
  for (let i = 0; i < BLOCK; i++) block.push(await builds[name as keyof typeof builds].loop());
  times[name]!.push(...block);
  rounds[name]!.push(block);
}
const perLaunch = (ms: number) => (ms * 1e6 / N).toFixed(0).padStart(6);
console.log(`worker client, ${N} launches per iteration; main-thread ns per launch, mean and median`);
for (const name of names) {
  console.log(`${name.padEnd(12)} ${perLaunch(mean(times[name]!))} ${perLaunch(median(times[name]!))}`);
}
const a = times["this tree"]!;
const b = times["other tree"]!;
console.log(
  `worker client.launch: this tree ÷ other tree ${(mean(a) / mean(b)).toFixed(3)} (mean), ${
    (median(a) / median(b)).toFixed(3)
  } (median); ${formatPaired(pairedRatio(rounds["this tree"]!, rounds["other tree"]!))}`,
);
for (const name of names) {
  builds[name].client.destroy();
  await builds[name].client.ended;
}

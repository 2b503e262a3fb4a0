/**
 * Indirect counts in plain handles, next to the raw `dispatchWorkgroupsIndirect`
 * floor, timed interleaved in one process (optionally against another tree):
 * a diagnostic for issue 33.3 on machines too noisy for `gaps_bench.ts`'s
 * separate groups. The launch is `gaps_bench.ts`'s (three storage buffers and
 * one info word), its count:
 * - `createCount`: a page of counts, read in place;
 * - `shared`: a `create`d count in the pool page of the launch's bindings,
 *   which WebGPU forbids to dispatch from in place (each launch after the
 *   first of a pass finds it copied already: no binding covers it);
 * - `shared, two in turn`: two such counts alternating (each is copied once
 *   per pass into a count slot of its own; before the slots, every launch
 *   copied its count).
 *
 * Each iteration encodes `N` launches and times only the encoding (wall
 * clock: on the software adapter a submit executes the dispatches), then
 * flushes and blocks until the device is idle. Every case runs `WARMUP`
 * untimed iterations, then `ROUNDS` rounds of `BLOCK` iterations, each round
 * in a fresh shuffled order. The client's `tasksMax` is above `N`.
 *
 * ```
 * mkdir -p /tmp/old && git archive <rev> mod.ts src | tar -x -C /tmp/old   # optional
 * LP_NUM_THREADS=0 OLD=/tmp/old deno run -A bench/ab_shared_count.ts
 * ```
 * (env `N`, default 1024; `ROUNDS`, default 20; `BLOCK`, default 10;
 * `WARMUP`, default 50; `OLD`, another tree's root, optional; `CASES`, a
 * regular expression the timed cases' names must match, the floor always runs).
 */

import * as NEW from "../mod.ts";
import { bindBuffers, blockUntilIdle, importTree, interleave, median, rawPipelines, storageLayout } from "./_raw.ts";

type Runtime = typeof NEW;
const N = Number(Deno.env.get("N") ?? 1024);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 20);
const BLOCK = Number(Deno.env.get("BLOCK") ?? 10);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 50);
const oldPath = Deno.env.get("OLD");

const WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < n) { c[g.x] = a[g.x] + b[g.x]; }
}`;

type Client = Awaited<ReturnType<Runtime["createClient"]>>;
type Kernel = ReturnType<Runtime["defineKernel"]>;
type Handle = ReturnType<Client["create"]>;
/** A tree's three launch loops: from one count, and from two in turn. */
interface Loops {
  one(client: Client, add: Kernel, count: Handle, buffers: Handle[], info: Uint32Array): void;
  two(client: Client, add: Kernel, s0: Handle, s1: Handle, buffers: Handle[], info: Uint32Array): void;
}
/**
 * Each tree's loops are written out at a place of their own: closures made
 * from one function literal share V8's type feedback, so one loop for both
 * trees would make its `client.launch` call site polymorphic and split V8's
 * inlining budget between the two trees' launch paths (see `ab_trees.ts`).
 */
const LOOPS: readonly [Loops, Loops] = [
  {
    one(client, add, count, buffers, info) {
      for (let i = 0; i < N; i++) client.launch(add, count, buffers, info);
    },
    two(client, add, s0, s1, buffers, info) {
      for (let i = 0; i < N; i += 2) {
        client.launch(add, s0, buffers, info);
        client.launch(add, s1, buffers, info);
      }
    },
  },
  {
    one(client, add, count, buffers, info) {
      for (let i = 0; i < N; i++) client.launch(add, count, buffers, info);
    },
    two(client, add, s0, s1, buffers, info) {
      for (let i = 0; i < N; i += 2) {
        client.launch(add, s0, buffers, info);
        client.launch(add, s1, buffers, info);
      }
    },
  },
];

/** One tree's cases, in ms per iteration. */
async function cases(runtime: Runtime, tree: string, loops: Loops, device?: GPUDevice) {
  const client = await runtime.createClient({ tasksMax: 4 * N, ...(device ? { device } : {}) });
  const add = runtime.defineKernel({ name: "add3", wgsl: WGSL });
  const info = new Uint32Array([64]);
  const buffers = [0, 1, 2].map(() => client.create(new Float32Array(64)));
  const count = client.createCount(1, 1, 1);
  const shared = [client.create(new Uint32Array([1, 1, 1])), client.create(new Uint32Array([1, 1, 1]))];
  for (const s of shared) {
    if (s.memory.slice!.page !== buffers[0]!.memory.slice!.page) {
      throw new Error("a count is not in the bindings' page");
    }
    client.launch(add, s, buffers, info);
  }
  client.launch(add, count, buffers, info);
  await client.sync();
  const gpu = client.server.device;
  const timed = (encode: () => void) => () => {
    const t0 = performance.now();
    encode();
    const ms = performance.now() - t0;
    client.flush().catch((e) => {
      console.error(e);
      Deno.exit(1);
    });
    blockUntilIdle(gpu);
    return ms;
  };
  const [s0, s1] = shared as [typeof count, typeof count];
  return {
    device: gpu,
    cases: {
      [`createCount, ${tree}`]: timed(() => loops.one(client, add, count, buffers, info)),
      [`shared, ${tree}`]: timed(() => loops.one(client, add, s0, buffers, info)),
      [`shared, two in turn, ${tree}`]: timed(() => loops.two(client, add, s0, s1, buffers, info)),
    },
  };
}

const fresh = await cases(NEW, "this tree", LOOPS[0]);
const device = fresh.device;
const other = oldPath
  ? await cases(
    await importTree(oldPath),
    "other tree",
    LOOPS[1],
    device,
  )
  : null;

// The raw floor: its own buffers, one bind group with the info word bound statically, a count in a buffer of its own.
const layout = storageLayout(device, 3, { staticInfo: true, label: "ab_shared_count raw layout" });
const [pipeline] = rawPipelines(device, layout, [WGSL], "ab_shared_count raw pipeline");
const storage = (label: string) =>
  device.createBuffer({ label, size: 256, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
const infoBuffer = storage("ab_shared_count raw info");
device.queue.writeBuffer(infoBuffer, 0, new Uint32Array([64]));
const bindGroup = bindBuffers(
  device,
  layout,
  [storage("raw a"), storage("raw b"), storage("raw c"), infoBuffer],
  "ab_shared_count raw bind group",
);
const indirect = device.createBuffer({
  label: "ab_shared_count raw count",
  size: 12,
  usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST,
});
device.queue.writeBuffer(indirect, 0, new Uint32Array([1, 1, 1]));
const FLOOR = "raw dispatchWorkgroupsIndirect";
const all: Record<string, () => number> = {
  [FLOOR]: () => {
    const encoder = device.createCommandEncoder({ label: "ab_shared_count raw encoder" });
    const pass = encoder.beginComputePass({ label: "ab_shared_count raw pass" });
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroupsIndirect(indirect, 0);
    }
    const ms = performance.now() - t0;
    pass.end();
    device.queue.submit([encoder.finish()]);
    blockUntilIdle(device);
    return ms;
  },
  ...fresh.cases,
  ...(other?.cases ?? {}),
};
const only = Deno.env.get("CASES");
const names = Object.keys(all).filter((n) => n === FLOOR || only === undefined || new RegExp(only).test(n));
const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) for (let i = 0; i < WARMUP; i++) all[name]!();
interleave(names, ROUNDS, (name) => {
  for (let i = 0; i < BLOCK; i++) times[name]!.push(all[name]!());
});
const perLaunch = (ms: number) => (ms * 1e6 / N).toFixed(0).padStart(6);
console.log(`${N} launches per iteration, ${ROUNDS * BLOCK} iterations each; ns per launch (median); ÷ floor (median)`);
for (const name of names) {
  const m = median(times[name]!);
  console.log(`${name.padEnd(36)} ${perLaunch(m)}  ${(m / median(times[FLOOR]!)).toFixed(2)}`);
}
Deno.exit(0);

/**
 * The launch shapes of the H200 gaps: a kernel with three storage buffers and
 * one info word, launched as users launch it, next to the raw WebGPU floor in
 * the same group: one encoder, one open pass, `setPipeline` + `setBindGroup`
 * + dispatch per launch, one submit.
 *
 * Groups:
 * - "static count, until submitted": `LONG` launches of count `[1]`, timed
 *   until everything is submitted; the client keeps its default `tasksMax`.
 *   The H200 target (≤ 1.15× the floor).
 * - "indirect count from a handle, until submitted": the same with the count
 *   read from device memory (`dispatchWorkgroupsIndirect`); the client's count
 *   comes from `createCount` (pages of counts only), the raw floor's is a
 *   buffer of its own. The H200 target (≤ 1.3×).
 * - "indirect count sharing the bindings' page, until submitted": a count
 *   made with `create`, in the same pool page as the launch's bindings, which
 *   WebGPU forbids to dispatch from in place (INDIRECT and writable STORAGE in
 *   one dispatch): each launch copies it first. Its floor is the raw
 *   `dispatchWorkgroupsIndirect` loop of the group above, from a buffer of
 *   its own: what a count costs when nothing has to be copied. The H200
 *   target (≤ 1.3×).
 * - "… submits outside the loop": `SHORT` launches, only the encoding timed
 *   (the client's `tasksMax` is above `SHORT`): on the software adapter a
 *   submit executes the dispatches on the CPU, so these are its ratios
 *   (≤ 1.25×).
 * - "indirect count sharing the bindings' page, submits outside the loop":
 *   the shared-page count of group 3 on the unbatched client, only the
 *   encoding timed (group 6, after the others so that `ONLY` keeps its
 *   numbers). A launch whose bindings do not cover its count leaves it
 *   unchanged, so the next launch from the same count skips the copy: in
 *   groups 3 and 6 only the first launch after each submit copies.
 * - "two counts sharing the bindings' page in turn, …": launches alternate
 *   between two counts of that page (groups 7 and 8, until submitted and
 *   submits outside the loop): each count is copied once per pass into a
 *   slot of the stream's indirect count buffer, and the launches after that
 *   find it there (before the slots, every launch copied its count).
 *
 * Run: `deno bench --allow-env bench/gaps_bench.ts` (env `LONG`, default
 * 20000; `SHORT`, default 1024; `TASKS_MAX`, the batched client's `tasksMax`,
 * default the client's default; `ONLY`, a comma-separated list of group
 * numbers to run, from 1).
 */

import { createClient, defineKernel, type Handle } from "../mod.ts";
import { bindBuffers, rawPipelines, storageLayout } from "./_raw.ts";

const LONG = Number(Deno.env.get("LONG") ?? 20000);
const SHORT = Number(Deno.env.get("SHORT") ?? 1024);

const WGSL = `
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> n: u32;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < n) { c[g.x] = a[g.x] + b[g.x]; }
}`;

const TASKS_MAX = Deno.env.get("TASKS_MAX");
const ONLY = Deno.env.get("ONLY")?.split(",").map(Number);
const client = await createClient(TASKS_MAX ? { tasksMax: Number(TASKS_MAX) } : {}); // default tasksMax
const unbatched = await createClient({ device: client.server.device, tasksMax: SHORT * 4 });
const device = client.server.device;
const add = defineKernel({ name: "add3", wgsl: WGSL });
const info = new Uint32Array([64]);
const one = [1];
const buffersOf = (c: typeof client): Handle[] => [0, 1, 2].map(() => c.create(new Float32Array(64)));
const bufs = buffersOf(client);
const ubufs = buffersOf(unbatched);
const count = client.createCount(1, 1, 1);
const ucount = unbatched.createCount(1, 1, 1);
const shared = client.create(new Uint32Array([1, 1, 1]));
const ushared = unbatched.create(new Uint32Array([1, 1, 1]));
const shared2 = client.create(new Uint32Array([1, 1, 1]));
const ushared2 = unbatched.create(new Uint32Array([1, 1, 1]));
for (const [c, s, b] of [[client, [shared, shared2], bufs], [unbatched, [ushared, ushared2], ubufs]] as const) {
  // These groups measure counts in the bindings' own page: refuse to time anything else.
  for (const h of s) {
    if (h.memory.slice!.page !== b[0]!.memory.slice!.page) {
      throw new Error("a shared count is not in the bindings' page");
    }
    c.launch(add, h, b, info);
  }
  c.launch(add, one, b, info);
  c.launch(add, c === client ? count : ucount, b, info);
  await c.sync();
}

// The raw floor: its own buffers, one bind group with the info word bound statically.
const storage = (size: number, label: string, usage = 0) =>
  device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | usage });
const layout = storageLayout(device, 3, { staticInfo: true, label: "raw gaps layout" });
const [pipeline] = rawPipelines(device, layout, [WGSL], "raw gaps pipeline");
const infoBuffer = storage(4, "raw gaps info");
device.queue.writeBuffer(infoBuffer, 0, info);
const bindGroup = bindBuffers(device, layout, [
  storage(256, "raw a"),
  storage(256, "raw b"),
  storage(256, "raw c"),
  infoBuffer,
], "raw gaps bind group");
const indirect = device.createBuffer({
  label: "raw gaps indirect count",
  size: 12,
  usage: GPUBufferUsage.INDIRECT | GPUBufferUsage.COPY_DST,
});
device.queue.writeBuffer(indirect, 0, new Uint32Array([1, 1, 1]));

/** The raw loop: `n` launches in one pass; `untilSubmitted` times the finish and submit too. */
function raw(b: Deno.BenchContext, n: number, fromMemory: boolean, untilSubmitted: boolean): void {
  const encoder = device.createCommandEncoder({ label: "raw gaps encoder" });
  const pass = encoder.beginComputePass();
  b.start();
  for (let i = 0; i < n; i++) {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    if (fromMemory) pass.dispatchWorkgroupsIndirect(indirect, 0);
    else pass.dispatchWorkgroups(1);
  }
  if (!untilSubmitted) b.end();
  pass.end();
  device.queue.submit([encoder.finish()]);
  if (untilSubmitted) b.end();
}

const groups = [
  { group: "static count, until submitted", n: LONG, fromMemory: false, untilSubmitted: true },
  { group: "indirect count from a handle, until submitted", n: LONG, fromMemory: true, untilSubmitted: true },
  {
    group: "indirect count sharing the bindings' page, until submitted",
    n: LONG / 4,
    fromMemory: true,
    untilSubmitted: true,
    sharedPage: true,
  },
  { group: "static count, submits outside the loop", n: SHORT, fromMemory: false, untilSubmitted: false },
  {
    group: "indirect count from a handle, submits outside the loop",
    n: SHORT,
    fromMemory: true,
    untilSubmitted: false,
  },
  {
    group: "indirect count sharing the bindings' page, submits outside the loop",
    n: SHORT,
    fromMemory: true,
    untilSubmitted: false,
    sharedPage: true,
  },
  {
    group: "two counts sharing the bindings' page in turn, until submitted",
    n: LONG / 4,
    fromMemory: true,
    untilSubmitted: true,
    sharedPage: true,
    alternate: true,
  },
  {
    group: "two counts sharing the bindings' page in turn, submits outside the loop",
    n: SHORT,
    fromMemory: true,
    untilSubmitted: false,
    sharedPage: true,
    alternate: true,
  },
];

const cases = groups as (typeof groups[number] & { sharedPage?: boolean; alternate?: boolean })[];
for (const [index, { group, n, fromMemory, untilSubmitted, sharedPage, alternate }] of cases.entries()) {
  if (ONLY !== undefined && !ONLY.includes(index + 1)) continue;
  const runs = untilSubmitted ? { n: 20, warmup: 3 } : { n: 60, warmup: 10 };
  Deno.bench(
    { group, name: "raw WebGPU floor", baseline: true, ...runs },
    (b) => raw(b, n, fromMemory, untilSubmitted),
  );
  const c = untilSubmitted ? client : unbatched;
  const buffers = untilSubmitted ? bufs : ubufs;
  const counts = sharedPage
    ? (untilSubmitted ? shared : ushared)
    : fromMemory
    ? (untilSubmitted ? count : ucount)
    : one;
  const other = untilSubmitted ? shared2 : ushared2; // the second count of groups 7 and 8
  Deno.bench({ group, name: "client.launch", ...runs }, async (b) => {
    b.start();
    if (!alternate) { for (let i = 0; i < n; i++) c.launch(add, counts, buffers, info); }
    else {
      for (let i = 0; i < n; i += 2) {
        c.launch(add, counts, buffers, info);
        c.launch(add, other, buffers, info);
      }
    }
    if (!untilSubmitted) b.end();
    const flushed = c.flush(); // submits synchronously; the promise reports queued errors
    if (untilSubmitted) b.end();
    await flushed;
  });
}

globalThis.addEventListener("unload", () => client.destroy());

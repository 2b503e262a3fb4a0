/**
 * Launch cost: host time to enqueue a dispatch through `client.launch`, next
 * to the raw WebGPU floor in the same group and on the same device, so every
 * figure is a ratio from one process.
 *
 * The raw floor is one encoder, one open pass, a cached bind group, and
 * `setBindGroup` + `dispatchWorkgroups` per launch (the pipeline is set once).
 *
 * Groups:
 * - "tiny launch": 1,024 launches of a one-workgroup kernel. Only the loop is
 *   timed; the submit happens outside it, because on the software adapter a
 *   submit makes the CPU execute the queued dispatches (tens of µs each), which
 *   would measure the software GPU, not the runtime. The client's `tasksMax` is
 *   above the loop length here, so no submit happens inside the loop.
 *   The client launches with its buffers in argument order (an array: the fast
 *   path) and by binding name (`{ x }`: the object's keys matched to the
 *   kernel's binding names into an array the kernel reuses, then the same
 *   path); the target for the named form is within 10% of the
 *   positional one on the H200 (`named_launch_ab.ts` times the two
 *   interleaved, which these sequential groups are too noisy for on a shared
 *   host).
 * - "4 buffers + changing info": the same with four storage buffers and info
 *   words that change every launch (raw: a dynamic-offset arena uploaded once),
 *   positional and by name.
 * - "tiny launch, default tasksMax, until submitted": 4,096 launches timed
 *   until everything is submitted, on both sides: the raw floor records one
 *   pass and submits once; the client submits every `tasksMax` launches. On a
 *   GPU, `finish` + `submit` cost about as much per dispatch as recording it,
 *   so this is the host cost a program really pays (the H200 target). On the
 *   software adapter a submit executes the dispatches on the CPU.
 *
 * On the software adapter, `LP_NUM_THREADS=0` keeps llvmpipe from executing
 * the previous iteration's dispatches on background threads while the next
 * loop is timed (2 cores here), which makes the figures far less noisy.
 *
 * Run: `deno task bench` or `deno bench --allow-env bench/launch_bench.ts`.
 */

import { createClient, defineKernel } from "../mod.ts";
import { DEFAULT_TASKS_MAX } from "../src/options/server_options.ts";
import { bindBuffers, FOUR_BUFFERS_INFO_WGSL, rawPipelines, storageLayout, TINY_WGSL } from "./_raw.ts";

const LAUNCHES = 1024;
const LONG = 4096;
const client = await createClient({ tasksMax: LAUNCHES * 4 });
const batched = await createClient({ device: client.server.device });
const device = client.server.device;

const tiny = defineKernel({ name: "tiny", wgsl: TINY_WGSL });
const withInfo = defineKernel({ name: "four-buffers-info", wgsl: FOUR_BUFFERS_INFO_WGSL });
const x = client.create(new Uint32Array(64));
const bx = batched.create(new Uint32Array(64));
const bufs = [0, 1, 2, 3].map(() => client.create(new Uint32Array(64)));
const infos = Array.from({ length: LAUNCHES }, (_, i) => new Uint32Array([i, i * 3, 7, i ^ 5]));
const one = [1];
const xs = [x];
const bxs = [bx];
const xNamed = { x };
const bufsNamed = { a: bufs[0]!, b: bufs[1]!, c: bufs[2]!, d: bufs[3]! };
client.launch(tiny, one, xs);
client.launch(tiny, one, xNamed);
client.launch(withInfo, one, bufs, infos[0]);
client.launch(withInfo, one, bufsNamed, infos[0]);
batched.launch(tiny, one, bxs);
await client.sync();
await batched.sync();

function rawBuffer(size: number, label: string): GPUBuffer {
  return device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
}
const rawTinyLayout = storageLayout(device, 1, { label: "raw layout 1" });
const [rawTiny] = rawPipelines(device, rawTinyLayout, [TINY_WGSL], "raw pipeline");
const rawTinyBg = bindBuffers(device, rawTinyLayout, [rawBuffer(256, "raw x")]);
const align = device.limits.minStorageBufferOffsetAlignment;
const rawInfoLayout = storageLayout(device, 4, { dynamicInfo: true, label: "raw layout 4" });
const [rawInfoPipe] = rawPipelines(device, rawInfoLayout, [FOUR_BUFFERS_INFO_WGSL], "raw pipeline");
const arena = rawBuffer(LAUNCHES * align, "raw info arena");
const arenaHost = new Uint32Array(LAUNCHES * align / 4);
const rawInfoBg = device.createBindGroup({
  layout: rawInfoLayout,
  entries: [
    ...[0, 1, 2, 3].map((i) => ({ binding: i, resource: { buffer: rawBuffer(256, `raw buffer ${i}`) } })),
    { binding: 4, resource: { buffer: arena, offset: 0, size: 16 } },
  ],
});
const dyn = new Uint32Array(1);

function rawTinyLoop(b: Deno.BenchContext, n: number): void {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(rawTiny);
  b.start();
  for (let i = 0; i < n; i++) {
    pass.setBindGroup(0, rawTinyBg);
    pass.dispatchWorkgroups(1);
  }
  b.end();
  pass.end();
  device.queue.submit([encoder.finish()]);
}

Deno.bench({ group: "tiny launch", name: "raw WebGPU floor", baseline: true, n: 60, warmup: 10 }, (b) => {
  rawTinyLoop(b, LAUNCHES);
});

Deno.bench({ group: "tiny launch", name: "client.launch", n: 60, warmup: 10 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(tiny, one, xs);
  b.end();
  await client.flush();
});

Deno.bench({ group: "tiny launch", name: "client.launch with array literals", n: 60, warmup: 10 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(tiny, [1], [x]);
  b.end();
  await client.flush();
});

Deno.bench({ group: "tiny launch", name: "client.launch by name", n: 60, warmup: 10 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(tiny, one, xNamed);
  b.end();
  await client.flush();
});

Deno.bench({ group: "tiny launch", name: "client.launch by name, object literals", n: 60, warmup: 10 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(tiny, [1], { x });
  b.end();
  await client.flush();
});

Deno.bench(
  { group: "4 buffers + changing info", name: "raw WebGPU floor", baseline: true, n: 60, warmup: 10 },
  (b) => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(rawInfoPipe);
    b.start();
    for (let i = 0; i < LAUNCHES; i++) {
      arenaHost.set(infos[i]!, (i * align) / 4);
      dyn[0] = i * align;
      pass.setBindGroup(0, rawInfoBg, dyn, 0, 1);
      pass.dispatchWorkgroups(1);
    }
    b.end();
    device.queue.writeBuffer(arena, 0, arenaHost); // once per submit, like the client's arena upload
    pass.end();
    device.queue.submit([encoder.finish()]);
  },
);

Deno.bench({ group: "4 buffers + changing info", name: "client.launch", n: 60, warmup: 10 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(withInfo, one, bufs, infos[i]);
  b.end();
  await client.flush();
});

Deno.bench({ group: "4 buffers + changing info", name: "client.launch by name", n: 60, warmup: 10 }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) client.launch(withInfo, one, bufsNamed, infos[i]);
  b.end();
  await client.flush();
});

Deno.bench(
  {
    group: "tiny launch, default tasksMax, until submitted",
    name: "raw WebGPU floor",
    baseline: true,
    n: 20,
    warmup: 3,
  },
  (b) => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(rawTiny);
    b.start();
    for (let i = 0; i < LONG; i++) {
      pass.setBindGroup(0, rawTinyBg);
      pass.dispatchWorkgroups(1);
    }
    pass.end();
    device.queue.submit([encoder.finish()]);
    b.end();
  },
);

Deno.bench(
  {
    group: "tiny launch, default tasksMax, until submitted",
    name: `client.launch (tasksMax ${DEFAULT_TASKS_MAX})`,
    n: 20,
    warmup: 3,
  },
  async (b) => {
    b.start();
    for (let i = 0; i < LONG; i++) batched.launch(tiny, one, bxs);
    const flushed = batched.flush(); // submits synchronously; the promise reports errors
    b.end();
    await flushed;
  },
);

globalThis.addEventListener("unload", () => client.destroy());

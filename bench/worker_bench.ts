/**
 * The worker client's launch path: what a launch costs the main thread
 * through a `WorkerClient` (a record written into the command ring) next to
 * a main-thread `ComputeClient` (encoded into the pass), and how fast the
 * worker encodes what the ring carries. Same process, same kernel; the raw
 * WebGPU floor (one open pass, a cached bind group) is in each group too.
 *
 * Groups:
 * - "main-thread cost per launch": 4,096 launches, the loop only. The
 *   main-thread client's `tasksMax` is above the loop, so nothing is
 *   submitted inside it; the worker client's ring is empty when the loop
 *   starts (waited for, untimed).
 * - "4 buffers + changing info, main-thread cost": the same with four
 *   storage buffers and info words that change every launch (inline in the
 *   ring records).
 * - "encoded by the worker": the worker client's loop plus the wait until the
 *   worker has read every record (encoded every launch into its pass): the
 *   worker's encoding rate, against the main-thread client's loop (its
 *   encoding rate). The target: at least 0.9× the main-thread rate.
 * - "until submitted, default tasksMax": both clients with their default
 *   `tasksMax`, timed until everything is submitted: the main-thread client
 *   pays each submit on the main thread, the worker client only the ring
 *   (the worker's flush reply is awaited in both).
 *
 * On the software adapter the main thread, the worker and llvmpipe share the
 * CPU cores: `LP_NUM_THREADS=0` keeps llvmpipe from executing dispatches on
 * background threads while a loop is timed.
 *
 * Run: `deno bench --allow-env --allow-read bench/worker_bench.ts` (read
 * access lets the Worker load the runtime's modules from this folder).
 */

import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, FOUR_BUFFERS_INFO_WGSL, rawPipelines, storageLayout, TINY_WGSL } from "./_raw.ts";

const LAUNCHES = 4096;
const main = await createClient({ tasksMax: LAUNCHES * 4 });
const worker = await createClient({ worker: true, tasksMax: LAUNCHES * 4 });
const mainDefault = await createClient();
const workerDefault = await createClient({ worker: true });
const device = main.server.device;

const tiny = defineKernel({ name: "tiny", wgsl: TINY_WGSL });
const withInfo = defineKernel({ name: "four-buffers-info", wgsl: FOUR_BUFFERS_INFO_WGSL });
const infos = Array.from({ length: LAUNCHES }, (_, i) => new Uint32Array([i, i * 3, 7, i ^ 5]));
const one = [1];

/** One client's buffers for both kernels. */
function setUp(client: typeof main | typeof worker) {
  const x = client.create(new Uint32Array(64));
  const bufs = [0, 1, 2, 3].map(() => client.create(new Uint32Array(64)));
  client.launch(tiny, one, [x]);
  client.launch(withInfo, one, bufs, infos[0]);
  return { xs: [x], bufs };
}
const m = setUp(main);
const w = setUp(worker);
const md = setUp(mainDefault);
const wd = setUp(workerDefault);
await Promise.all([main.sync(), worker.sync(), mainDefault.sync(), workerDefault.sync()]);

/** Spins until the worker has read every record written so far (turning the event loop for a spill). */
async function drained(client: typeof worker): Promise<void> {
  const ring = client.connection.ring;
  while (ring.backlog() > 0) {
    if (ring.spilled > 0) await new Promise((r) => setTimeout(r, 0)); // the worker's `space` message
  }
}

const rawLayout = storageLayout(device, 1, { label: "raw layout 1" });
const [rawTiny] = rawPipelines(device, rawLayout, [TINY_WGSL], "raw pipeline");
const rawBg = bindBuffers(device, rawLayout, [
  device.createBuffer({ label: "raw x", size: 256, usage: GPUBufferUsage.STORAGE }),
]);
function rawLoop(b: Deno.BenchContext): void {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(rawTiny);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) {
    pass.setBindGroup(0, rawBg);
    pass.dispatchWorkgroups(1);
  }
  b.end();
  pass.end();
  device.queue.submit([encoder.finish()]);
}

const opts = { n: 40, warmup: 10 };
let g = "main-thread cost per launch";
Deno.bench({ group: g, name: "raw WebGPU floor", ...opts }, rawLoop);
Deno.bench({ group: g, name: "ComputeClient.launch", baseline: true, ...opts }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) main.launch(tiny, one, m.xs);
  b.end();
  await main.flush();
});
Deno.bench({ group: g, name: "WorkerClient.launch", ...opts }, async (b) => {
  await drained(worker);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) worker.launch(tiny, one, w.xs);
  b.end();
  await worker.flush();
});

g = "4 buffers + changing info, main-thread cost";
Deno.bench({ group: g, name: "ComputeClient.launch", baseline: true, ...opts }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) main.launch(withInfo, one, m.bufs, infos[i]);
  b.end();
  await main.flush();
});
Deno.bench({ group: g, name: "WorkerClient.launch", ...opts }, async (b) => {
  await drained(worker);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) worker.launch(withInfo, one, w.bufs, infos[i]);
  b.end();
  await worker.flush();
});

g = "encoded by the worker";
Deno.bench({ group: g, name: "raw WebGPU floor", ...opts }, rawLoop);
Deno.bench(
  { group: g, name: "ComputeClient.launch (encodes on the main thread)", baseline: true, ...opts },
  async (b) => {
    b.start();
    for (let i = 0; i < LAUNCHES; i++) main.launch(tiny, one, m.xs);
    b.end();
    await main.flush();
  },
);
Deno.bench({ group: g, name: "WorkerClient.launch until the worker encoded all", ...opts }, async (b) => {
  await drained(worker);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) worker.launch(tiny, one, w.xs);
  await drained(worker);
  b.end();
  await worker.flush();
});

g = "until submitted, default tasksMax";
Deno.bench({ group: g, name: "ComputeClient.launch + flush", baseline: true, ...opts }, async (b) => {
  b.start();
  for (let i = 0; i < LAUNCHES; i++) mainDefault.launch(tiny, one, md.xs);
  await mainDefault.flush();
  b.end();
});
Deno.bench({ group: g, name: "WorkerClient.launch + flush", ...opts }, async (b) => {
  await drained(workerDefault);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) workerDefault.launch(tiny, one, wd.xs);
  await workerDefault.flush();
  b.end();
});

globalThis.addEventListener("unload", () => {
  for (const c of [main, mainDefault]) c.destroy();
  for (const c of [worker, workerDefault]) c.destroy(); // each Worker ends itself after its device
});

/**
 * Choosing the default `tasksMax` (dispatches per submit): host time per
 * launch over 8,192 tiny launches until everything is submitted, for several
 * batch sizes, next to the raw floor (one encoder and one pass for the whole
 * loop, then one finish and submit).
 *
 * Meaningful on a real GPU only: on the software adapter each submit executes
 * the dispatches on the CPU, so smaller batches look slower for that reason.
 *
 * Run: `deno bench --allow-env bench/tasks_max_bench.ts`.
 */

import { createClient, defineKernel } from "../mod.ts";
import { bindBuffers, rawPipelines, storageLayout, TINY_WGSL } from "./_raw.ts";

const LAUNCHES = 8192;
const SIZES = [16, 32, 64, 128, 256, 512, 1024, 4096];
const first = await createClient();
const device = first.server.device;
const kernel = defineKernel({ name: "tiny", wgsl: TINY_WGSL });
const clients = await Promise.all(SIZES.map((tasksMax) => createClient({ device, tasksMax })));
const one = [1];
const targets = clients.map((c) => [c.create(new Uint32Array(4))]);
clients.forEach((c, i) => c.launch(kernel, one, targets[i]!));
await Promise.all(clients.map((c) => c.sync()));

const layout = storageLayout(device, 1);
const [pipeline] = rawPipelines(device, layout, [TINY_WGSL]);
const bg = bindBuffers(device, layout, [device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE })]);

Deno.bench({ group: "tasksMax sweep", name: "raw floor (one encoder, one pass)", baseline: true, n: 10 }, async (b) => {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  b.start();
  for (let i = 0; i < LAUNCHES; i++) {
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(1);
  }
  pass.end();
  device.queue.submit([encoder.finish()]);
  b.end();
  await device.queue.onSubmittedWorkDone();
});

SIZES.forEach((tasksMax, i) => {
  const client = clients[i]!;
  const target = targets[i]!;
  Deno.bench({ group: "tasksMax sweep", name: `client.launch, tasksMax ${tasksMax}`, n: 10 }, async (b) => {
    b.start();
    for (let j = 0; j < LAUNCHES; j++) client.launch(kernel, one, target);
    const flushed = client.flush(); // the last submit happens inside the timed region
    b.end();
    await flushed;
    await client.sync();
  });
});

globalThis.addEventListener("unload", () => first.destroy());

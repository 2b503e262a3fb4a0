/**
 * Several devices, each held by its own Worker: every worker client fills a
 * buffer with a kernel, the clients all-reduce it (each worker reads and
 * writes its device and reduces its share of the elements, in parallel), and
 * the main thread checks the result against the CPU while a 1 ms timer
 * shows that its event loop never waited for a device.
 *
 * Run: `deno run --allow-read examples/worker_devices.ts` (`--allow-read`
 * lets the runtime start its Worker from local files; from JSR it is not needed).
 */

import { closeDevices, createClient, defineKernel, type WorkerClient } from "../mod.ts";

const DEVICES = 4;
const N = 1 << 20; // one million f32 per device

/** x[i] = 1000·rank + i % 1000 (whole numbers: every sum is exact in f32). */
const fill = defineKernel({
  name: "fill",
  wgsl: `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> rank: f32;
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) n: vec3u) {
  let i = g.x + g.y * n.x * 256u;
  if (i < arrayLength(&x)) { x[i] = rank * 1000.0 + f32(i % 1000u); }
}`,
});

let longestGap = 0;
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  longestGap = Math.max(longestGap, now - last);
  last = now;
}, 1);

const clients: WorkerClient[] = [];
for (let i = 0; i < DEVICES; i++) clients.push(await createClient({ worker: true, deviceIndex: i }));
const devices = clients.map((c) => c.deviceId.index);
const xs = clients.map((c, rank) => {
  const x = c.empty(N * 4);
  c.launch(fill, [N / 256], [x], new Float32Array([rank]));
  return x;
});
last = performance.now();
longestGap = 0;
const t0 = performance.now();
clients.forEach((c, i) => void c.allReduce(xs[i]!, xs[i]!, { dtype: "f32", devices }));
await Promise.all(clients.map((c) => c.syncCollective()));
const results = await Promise.all(clients.map((c, i) => c.read(xs[i]!, Float32Array)));
const ms = performance.now() - t0;
clearInterval(timer);

// The CPU reference: Σ over ranks of 1000·rank + i % 1000.
let wrong = 0;
for (let i = 0; i < N; i++) {
  let want = 0;
  for (let rank = 0; rank < DEVICES; rank++) want += rank * 1000 + (i % 1000);
  for (const r of results) if (r[i] !== want) wrong++;
}
console.log(`${clients[0]!.properties.identity.description}: ${DEVICES} worker clients`);
console.log(`all-reduce of ${N} f32 and the reads back: ${ms.toFixed(1)} ms, ${wrong} wrong elements`);
console.log(`longest gap of a 1 ms timer on the main thread meanwhile: ${longestGap.toFixed(1)} ms`);
await closeDevices();
await Promise.all(clients.map((c) => c.ended));

/**
 * What a process keeps on the GPU after its clients are destroyed (issue 28: on an H100 `deno task test` found no
 * adapter after 44 files, though every file alone passes). Prints, after each phase, this process's GPU memory (from
 * `nvidia-smi`, MiB), its thread and file-descriptor counts, and how many devices it requested are still reachable:
 *
 * - `clients`: 20 × (createClient, 64 MiB create + launch-free read, destroy), no gc;
 * - `gc`: then gc() with a few event-loop turns;
 * - `clients+gc`: 20 more, gc() after each;
 * - `raw`: 20 × (requestAdapter, requestDevice, 64 MiB buffer, device.destroy()), no gc, then gc;
 * - `workers`: 5 worker clients, each created, read, destroyed, `ended` awaited.
 *
 * Run (GPU machine): `deno run -A --v8-flags=--expose-gc bench/device_memory_probe.ts`.
 * @module
 */
import { createClient } from "../mod.ts";

const gc = (globalThis as { gc?: () => void }).gc;
const refs: WeakRef<GPUDevice>[] = [];
const request = GPUAdapter.prototype.requestDevice;
GPUAdapter.prototype.requestDevice = async function (this: GPUAdapter, d?: GPUDeviceDescriptor) {
  const device = await request.call(this, d);
  refs.push(new WeakRef(device));
  return device;
};

async function gpuMiB(): Promise<string> {
  try {
    const out = await new Deno.Command("nvidia-smi", {
      args: ["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
    }).output();
    const mine = new TextDecoder().decode(out.stdout).split("\n").map((l) => l.split(",").map((s) => s.trim()))
      .filter(([pid]) => pid === String(Deno.pid));
    const total = await new Deno.Command("nvidia-smi", {
      args: ["--query-gpu=memory.used", "--format=csv,noheader,nounits"],
    }).output();
    return `${mine.map((m) => m[1]).join("+") || "0"} MiB (GPU total ${new TextDecoder().decode(total.stdout).trim()})`;
  } catch {
    return "no nvidia-smi";
  }
}
const count = (dir: string) => [...Deno.readDirSync(dir)].length;
async function report(phase: string) {
  const alive = refs.filter((r) => r.deref() !== undefined).length;
  console.log(
    `${phase.padEnd(22)} gpu ${await gpuMiB()}, threads ${count("/proc/self/task")}, fds ${
      count("/proc/self/fd")
    }, devices reachable ${alive} of ${refs.length}`,
  );
}
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 10));
    gc?.();
  }
};
const MB64 = new Float32Array(16 << 20);

await report("start");
for (let i = 1; i <= 20; i++) {
  const c = await createClient();
  await c.read(c.create(MB64));
  c.destroy();
  if (i % 5 === 0) await report(`clients ${i}`);
}
await turns(5);
await report("after gc");
for (let i = 1; i <= 20; i++) {
  const c = await createClient();
  await c.read(c.create(MB64));
  c.destroy();
  await turns(2);
  if (i % 5 === 0) await report(`clients+gc ${i}`);
}
for (let i = 1; i <= 20; i++) {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice();
  const b = device.createBuffer({ size: 64 << 20, usage: GPUBufferUsage.STORAGE, label: "probe" });
  device.queue.writeBuffer(b, 0, MB64);
  await device.queue.onSubmittedWorkDone();
  device.destroy();
  if (i % 10 === 0) await report(`raw ${i}`);
}
await turns(5);
await report("raw after gc");
for (let i = 1; i <= 5; i++) {
  const c = await createClient({ worker: true });
  await c.read(c.create(MB64));
  c.destroy();
  await c.ended;
}
await new Promise((r) => setTimeout(r, 500));
await report("workers 5");

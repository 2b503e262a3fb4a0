/**
 * What one device per Worker buys an all-reduce: the raw host-staged
 * all-reduce on one thread (map all, CPU sum, chunked writes; the baseline of
 * `collectives_bench.ts`) next to the same done by one Worker per device over
 * a `SharedArrayBuffer` (each stages its source into its slice, sums 1/N of
 * the elements over every slice, uploads the sum), and `client.allReduce` on
 * one thread; interleaved in a shuffled order each rep, min, p10 and median.
 * Both raw forms are timed until every device has run its upload. Worker
 * clients (`createClient({ worker: true })`, one device each) run the same
 * `allReduce`: their devices read and write in parallel, and each worker sums
 * 1/N of the elements; a fifth variant does the same with `fastReads: true`.
 *
 * Run: `MIB=64 DEVICES=4 REPS=11 deno run --allow-env --allow-read bench/collectives_workers.ts`.
 */

import { type ComputeClient, createClient, type WorkerClient } from "../mod.ts";
import { chunked, rawBuffers, sourceData, sumInto } from "./_collectives_raw.ts";

const env = (name: string, fallback: string) =>
  Deno.permissions.querySync({ name: "env", variable: name }).state === "granted"
    ? Deno.env.get(name) ?? fallback
    : fallback;
const MIB = Number(env("MIB", "16"));
const N = Number(env("DEVICES", "2"));
const REPS = Number(env("REPS", "11"));
const n = (MIB << 20) / 4;
const bytes = n * 4;
const CHUNK = 4 << 20;

// One thread, raw.
const raw: GPUDevice[] = [];
for (let i = 0; i < N; i++) {
  raw.push(await (await navigator.gpu.requestAdapter())!.requestDevice({ label: `raw ${i}` }));
}
const { src, dst, staging } = rawBuffers(raw, n, CHUNK);
async function oneThread(): Promise<void> {
  raw.forEach((d, i) => {
    const e = d.createCommandEncoder({ label: `raw copy ${i}` });
    e.copyBufferToBuffer(src[i]!, 0, staging[i]!, 0, bytes);
    d.queue.submit([e.finish()]);
  });
  await Promise.all(staging.map((s) => s.mapAsync(GPUMapMode.READ)));
  const views = staging.map((s) => new Float32Array(s.getMappedRange()));
  for (const v of views.slice(1)) sumInto(views[0]!, v);
  raw.forEach((d, i) => chunked(d, dst[i]!, views[0]!, CHUNK));
  staging.forEach((s) => s.unmap());
  await Promise.all(raw.map((d) => d.queue.onSubmittedWorkDone()));
}

// One Worker per device, raw.
const sab = new SharedArrayBuffer((N + 1) * bytes);
const workers = Array.from(
  { length: N },
  () => new Worker(new URL("./_collectives_worker.ts", import.meta.url), { type: "module" }),
);
const replies = workers.map(() => [] as ((op: string) => void)[]);
workers.forEach((w, i) => {
  w.onmessage = (ev) => replies[i]!.shift()?.(ev.data.op);
  w.onerror = (e) => {
    console.error(`worker ${i}:`, e.message);
    Deno.exit(1);
  };
});
const all = (op: string, extra: (i: number) => object = () => ({})) =>
  Promise.all(workers.map((w, i) => {
    const p = new Promise<string>((resolve) => replies[i]!.push(resolve));
    w.postMessage({ op, ...extra(i) });
    return p;
  }));
await all("init", (rank) => ({ sab, parts: N, rank, n }));
async function perWorker(): Promise<void> {
  await all("stage");
  await all("reduce");
  await all("upload");
}

// One thread, the runtime.
const clients: ComputeClient[] = [];
for (let i = 0; i < N; i++) clients.push(await createClient({ deviceIndex: i }));
const hs = clients.map((c, i) => c.create(sourceData(n, i)));
const hd = clients.map((c) => c.empty(bytes));
const devices = clients.map((c) => c.deviceId.index);
async function runtime(): Promise<void> {
  await Promise.all(clients.map((c, i) => c.allReduce(hs[i]!, hd[i]!, { dtype: "f32", devices, reduceOn: "host" })));
  await Promise.all(clients.map((c) => c.sync()));
}

// Worker clients, one device (and Worker) each: they read and write in parallel, this thread sums.
const wclients: WorkerClient[] = [];
for (let i = 0; i < N; i++) wclients.push(await createClient({ worker: true, deviceIndex: N + i }));
const ws = wclients.map((c, i) => c.create(sourceData(n, i)));
const wd = wclients.map((c) => c.empty(bytes));
const wdevices = wclients.map((c) => c.deviceId.index);
async function workerClients(): Promise<void> {
  await Promise.all(
    wclients.map((c, i) => c.allReduce(ws[i]!, wd[i]!, { dtype: "f32", devices: wdevices, reduceOn: "host" })),
  );
  await Promise.all(wclients.map((c) => c.sync()));
}

// The same with fast reads (`fastReads: true`): the workers' source reads skip Deno's map wait.
const fclients: WorkerClient[] = [];
for (let i = 0; i < N; i++) {
  fclients.push(await createClient({ worker: true, deviceIndex: 2 * N + i, fastReads: true }));
}
const fs = fclients.map((c, i) => c.create(sourceData(n, i)));
const fd = fclients.map((c) => c.empty(bytes));
const fdevices = fclients.map((c) => c.deviceId.index);
async function fastWorkerClients(): Promise<void> {
  await Promise.all(
    fclients.map((c, i) => c.allReduce(fs[i]!, fd[i]!, { dtype: "f32", devices: fdevices, reduceOn: "host" })),
  );
  await Promise.all(fclients.map((c) => c.sync()));
}

const variants: [string, () => Promise<void>][] = [
  ["raw, one thread (baseline)", oneThread],
  ["raw, one Worker per device", perWorker],
  ["client.allReduce, one thread", runtime],
  ["client.allReduce, worker clients", workerClients],
  ["worker clients, fastReads", fastWorkerClients],
];
const times = new Map<string, number[]>(variants.map(([k]) => [k, []]));
for (const [, v] of variants) await v(); // warm-up
await all("check");
for (let r = 0; r < REPS; r++) {
  for (const [name, v] of [...variants].sort(() => Math.random() - 0.5)) {
    const t0 = performance.now();
    await v();
    times.get(name)!.push(performance.now() - t0);
  }
}
await all("check");
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))]!;
const base = q(times.get(variants[0]![0])!, 0.5);
console.log(`all-reduce ${MIB} MiB × ${N} devices, ${REPS} reps (ms: min p10 median, median / baseline)`);
for (const [name, v] of times) {
  console.log(
    `${name.padEnd(32)} ${q(v, 0).toFixed(1).padStart(8)} ${q(v, 0.1).toFixed(1).padStart(8)} ${
      q(v, 0.5).toFixed(1).padStart(8)
    } ${(q(v, 0.5) / base).toFixed(2).padStart(6)}×`,
  );
}
await all("close");
for (const c of clients) c.destroy();
const sums = await wclients[0]!.read(wd[0]!, Float32Array);
const want = sourceData(n, 0);
for (let i = 1; i < N; i++) sumInto(want, sourceData(n, i));
if (sums.some((v, k) => v !== want[k])) throw new Error("worker clients' all-reduce differs from the CPU sum");
const fsums = await fclients[0]!.read(fd[0]!, Float32Array);
if (fsums.some((v, k) => v !== want[k])) {
  throw new Error("fast-read worker clients' all-reduce differs from the CPU sum");
}
for (const c of [...wclients, ...fclients]) c.destroy();
await Promise.all([...wclients, ...fclients].map((c) => c.ended));
for (const d of raw) d.destroy();

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

/** N worker clients from logical device `first` on, each holding its source and destination, and their all-reduce. */
async function workerGroup(first: number, fastReads: boolean) {
  const clients: WorkerClient[] = [];
  for (let i = 0; i < N; i++) clients.push(await createClient({ worker: true, deviceIndex: first + i, fastReads }));
  const src = clients.map((c, i) => c.create(sourceData(n, i)));
  const dst = clients.map((c) => c.empty(bytes));
  const devices = clients.map((c) => c.deviceId.index);
  const run = async (): Promise<void> => {
    await Promise.all(
      clients.map((c, i) => c.allReduce(src[i]!, dst[i]!, { dtype: "f32", devices, reduceOn: "host" })),
    );
    await Promise.all(clients.map((c) => c.sync()));
  };
  return { clients, dst, run };
}

// Worker clients, one device (and Worker) each: they read and write in parallel, each worker sums 1/N; then the
// same with fast reads (`fastReads: true`): the workers' source reads skip Deno's map wait.
const plain = await workerGroup(N, false);
const fast = await workerGroup(2 * N, true);

const variants: [string, () => Promise<void>][] = [
  ["raw, one thread (baseline)", oneThread],
  ["raw, one Worker per device", perWorker],
  ["client.allReduce, one thread", runtime],
  ["client.allReduce, worker clients", plain.run],
  ["worker clients, fastReads", fast.run],
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
const want = sourceData(n, 0);
for (let i = 1; i < N; i++) sumInto(want, sourceData(n, i));
for (const [name, group] of [["worker clients", plain], ["fast-read worker clients", fast]] as const) {
  const sums = await group.clients[0]!.read(group.dst[0]!, Float32Array);
  if (sums.some((v, k) => v !== want[k])) throw new Error(`${name}' all-reduce differs from the CPU sum`);
}
const ended = [...plain.clients, ...fast.clients];
for (const c of ended) c.destroy();
await Promise.all(ended.map((c) => c.ended));
for (const d of raw) d.destroy();

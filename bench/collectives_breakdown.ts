/**
 * The all-reduce of `collectives_bench.ts`, measured robustly on busy
 * machines: the raw host-staged baseline and `client.allReduce` (host and
 * device reduction) run interleaved, in an order shuffled afresh each rep;
 * min, p10 and median are reported, and the raw baseline's phases (map all,
 * CPU sum, chunked writes, drain) next to the runtime's (the collective, then
 * the completion wait on every device).
 *
 * Run: `MIB=16 DEVICES=2 REPS=15 deno run --allow-env bench/collectives_breakdown.ts`.
 */

import { type ComputeClient, createClient } from "../mod.ts";
import { chunked, rawBuffers, sourceData, sumInto } from "./_collectives_raw.ts";

const env = (name: string, fallback: string) =>
  Deno.permissions.querySync({ name: "env", variable: name }).state === "granted"
    ? Deno.env.get(name) ?? fallback
    : fallback;
const MIB = Number(env("MIB", "16"));
const N = Number(env("DEVICES", "2"));
const REPS = Number(env("REPS", "15"));
const bytes = MIB << 20;
const n = bytes / 4;
const CHUNK = 4 << 20;

const clients: ComputeClient[] = [];
for (let i = 0; i < N; i++) clients.push(await createClient({ deviceIndex: i }));
const raw: GPUDevice[] = [];
for (let i = 0; i < N; i++) {
  raw.push(await (await navigator.gpu.requestAdapter())!.requestDevice({ label: `raw ${i}` }));
}

const { src, dst, staging } = rawBuffers(raw, n, CHUNK);
const hs = clients.map((c, i) => c.create(sourceData(n, i)));
const hd = clients.map((c) => c.empty(bytes));
const devices = clients.map((c) => c.deviceId.index);

const times: Record<string, number[]> = {};
const mark = (k: string, t: number) => (times[k] ??= []).push(t);

async function rawHost(): Promise<void> {
  const t0 = performance.now();
  raw.forEach((d, i) => {
    const e = d.createCommandEncoder({ label: `raw copy ${i}` });
    e.copyBufferToBuffer(src[i]!, 0, staging[i]!, 0, bytes);
    d.queue.submit([e.finish()]);
  });
  await Promise.all(staging.map((s) => s.mapAsync(GPUMapMode.READ)));
  const t1 = performance.now();
  const views = staging.map((s) => new Float32Array(s.getMappedRange()));
  const acc = views[0]!;
  for (const v of views.slice(1)) sumInto(acc, v);
  const t2 = performance.now();
  raw.forEach((d, i) => chunked(d, dst[i]!, acc, CHUNK));
  staging.forEach((s) => s.unmap());
  const t3 = performance.now();
  await Promise.all(raw.map((d) => d.queue.onSubmittedWorkDone()));
  const t4 = performance.now();
  mark("raw: map all", t1 - t0);
  mark("raw: CPU sum", t2 - t1);
  mark("raw: writes", t3 - t2);
  mark("raw: drain", t4 - t3);
  mark("raw host-staged total", t4 - t0);
}

async function runtime(reduceOn: "host" | "device"): Promise<void> {
  const t0 = performance.now();
  await Promise.all(clients.map((c, i) => c.allReduce(hs[i]!, hd[i]!, { dtype: "f32", devices, reduceOn })));
  const t1 = performance.now();
  await Promise.all(clients.map((c) => c.sync()));
  const t2 = performance.now();
  mark(`allReduce ${reduceOn}: collective`, t1 - t0);
  mark(`allReduce ${reduceOn}: drain`, t2 - t1);
  mark(`allReduce ${reduceOn} total`, t2 - t0);
}

const variants = [rawHost, () => runtime("host"), () => runtime("device")];
for (const v of variants) await v(); // warm-up
for (const k of Object.keys(times)) delete times[k];
for (let r = 0; r < REPS; r++) {
  const order = [...variants].sort(() => Math.random() - 0.5);
  for (const v of order) await v();
}
const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))]!;
console.log(`all-reduce ${MIB} MiB × ${N} devices, ${REPS} reps (ms: min p10 median)`);
for (const [k, v] of Object.entries(times).sort()) {
  console.log(
    `${k.padEnd(34)} ${q(v, 0).toFixed(1).padStart(8)} ${q(v, 0.1).toFixed(1).padStart(8)} ${
      q(v, 0.5).toFixed(1).padStart(8)
    }`,
  );
}
const base = q(times["raw host-staged total"]!, 0.5);
for (const s of ["host", "device"]) {
  console.log(`allReduce ${s} / raw (median): ${(q(times[`allReduce ${s} total`]!, 0.5) / base).toFixed(2)}×`);
}
for (const c of clients) c.destroy();
for (const d of raw) d.destroy();

/**
 * Where a large download's time goes (issue 18.4): raw WebGPU and the client,
 * for one 64 MiB read and for 16 reads of 4 MiB in one batch, interleaved rep
 * by rep in an order shuffled afresh each rep (so drift, garbage collection
 * and page faults of earlier reps fall on every variant alike), with min, p10
 * and median per variant and the median time inside each WebGPU call
 * (`mapAsync`'s synchronous part, the wait for its promise, `getMappedRange`,
 * `unmap`). Both sides reuse their staging buffers: raw keeps one of exactly
 * the size read, the client its pooled ones. A diagnostic script, not a
 * `Deno.bench` file.
 *
 * Run: `deno run --allow-env --allow-read bench/download_breakdown.ts` (env
 * `MIB`, default 64; `REPS`, default 15). Page faults of the fresh
 * `ArrayBuffer` each `getMappedRange` returns dominate on Deno: compare with
 * `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` (transparent huge pages for malloc).
 */

import { createClient } from "../mod.ts";

const MIB = Number(Deno.env.get("MIB") ?? 64);
const REPS = Number(Deno.env.get("REPS") ?? 15);
const BIG = MIB * 1024 * 1024;
const PARTS = 16;
const PART = BIG / PARTS;

const client = await createClient();
const device = client.server.device;
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const rawSrc = device.createBuffer({ label: "raw source", size: BIG, usage });
const rawStaging = device.createBuffer({
  label: "raw staging",
  size: BIG,
  usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
});
const fill = new Uint8Array(BIG);
for (let i = 0; i < BIG; i += 4096) fill[i] = i & 255;
device.queue.writeBuffer(rawSrc, 0, fill);
const one = client.create(fill);
const parts = Array.from({ length: PARTS }, (_, i) => client.create(fill.subarray(i * PART, (i + 1) * PART)));
await client.sync();

/** Milliseconds spent inside each watched WebGPU call during the current rep. */
const inside: Record<string, number> = {};
const proto = GPUBuffer.prototype;
const original = { mapAsync: proto.mapAsync, getMappedRange: proto.getMappedRange, unmap: proto.unmap };
const timed = <A extends unknown[], R>(name: string, f: (this: GPUBuffer, ...a: A) => R) =>
  function (this: GPUBuffer, ...a: A): R {
    const t0 = performance.now();
    const r = f.apply(this, a);
    inside[name] = (inside[name] ?? 0) + performance.now() - t0;
    return r;
  };
proto.getMappedRange = timed("getMappedRange", original.getMappedRange);
proto.unmap = timed("unmap", original.unmap);
proto.mapAsync = function (this: GPUBuffer, ...a: Parameters<GPUBuffer["mapAsync"]>) {
  const t0 = performance.now();
  const p = original.mapAsync.apply(this, a);
  const t1 = performance.now();
  inside["mapAsync (call)"] = (inside["mapAsync (call)"] ?? 0) + t1 - t0;
  return p.then((v) => {
    inside["mapAsync (wait)"] = (inside["mapAsync (wait)"] ?? 0) + performance.now() - t1;
    return v;
  });
};

async function rawRead(ranges: number): Promise<number> {
  const encoder = device.createCommandEncoder();
  const size = BIG / ranges;
  for (let i = 0; i < ranges; i++) encoder.copyBufferToBuffer(rawSrc, i * size, rawStaging, i * size, size);
  device.queue.submit([encoder.finish()]);
  await rawStaging.mapAsync(GPUMapMode.READ, 0, BIG);
  let n = 0;
  for (let i = 0; i < ranges; i++) n += rawStaging.getMappedRange(i * size, size).transfer().byteLength;
  rawStaging.unmap();
  return n;
}

const variants: Record<string, () => Promise<number>> = {
  [`raw, one ${MIB} MiB range`]: () => rawRead(1),
  [`client.read, one ${MIB} MiB handle`]: async () => (await client.read(one)).byteLength,
  [`raw, ${PARTS} ranges in one map`]: () => rawRead(PARTS),
  [`client.readMany, ${PARTS} handles`]: async () =>
    (await client.readMany(parts)).reduce((n, b) => n + b.byteLength, 0),
};
const totals: Record<string, number[]> = {};
const phases: Record<string, Record<string, number[]>> = {};
for (const run of Object.values(variants)) await run(); // warm-up: staging buffers exist on both sides

let seed = 0x2545f491;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const names = Object.keys(variants);
for (let rep = 0; rep < REPS; rep++) {
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [names[i], names[j]] = [names[j]!, names[i]!];
  }
  for (const name of names) {
    for (const k of Object.keys(inside)) delete inside[k];
    const t0 = performance.now();
    const n = await variants[name]!();
    const ms = performance.now() - t0;
    if (n !== BIG) throw new Error(`${name} read ${n} B, expected ${BIG}`);
    (totals[name] ??= []).push(ms);
    const p = phases[name] ??= {};
    for (const [k, v] of Object.entries(inside)) (p[k] ??= []).push(v);
  }
}
Object.assign(proto, original);

const q = (xs: number[], f: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * f))]!;
console.log(
  `${MIB} MiB downloads on ${client.properties.identity.description}, ${REPS} reps interleaved; ` +
    `GLIBC_TUNABLES=${Deno.env.get("GLIBC_TUNABLES") ?? "(unset)"}`,
);
const base = q(totals[names.find((n) => n.startsWith("raw, one"))!]!, 0.5);
for (const name of Object.keys(variants)) {
  const t = totals[name]!;
  const inner = Object.entries(phases[name] ?? {}).map(([k, v]) => `${k} ${q(v, 0.5).toFixed(1)}`).join(", ");
  console.log(
    `${name.padEnd(34)} min ${q(t, 0).toFixed(1)} ms, p10 ${q(t, 0.1).toFixed(1)}, median ${q(t, 0.5).toFixed(1)} ` +
      `(raw one-range median ÷ this ${(base / q(t, 0.5)).toFixed(2)}); inside: ${inner}`,
  );
}
client.destroy();

/**
 * The transfer series of `scaling.ts`: write and read GB/s from 4 KiB up to
 * `MAX_BYTES`, and all-reduce time over 2 and 4 logical devices, each next to
 * its raw WebGPU path, the two interleaved rep by rep in a shuffled order,
 * the minimum over reps reported (3 to 15 reps, fewer for larger sizes), as
 * in `_scaling_host.ts`.
 *
 * - write: `client.write(h, data)` then `client.sync()`; raw: `writeBuffer`
 *   in 4 MiB chunks with a submit after each (the fastest raw upload of
 *   `transfer_bench.ts`), then `onSubmittedWorkDone()`. Both are timed until
 *   the device has run the upload.
 * - read: `client.read(h)`; raw: a copy into a staging buffer of exactly the
 *   size read (kept for the size's reps), `mapAsync`,
 *   `getMappedRange().transfer()`, `unmap`.
 * - all-reduce: `client.allReduce` with `reduceOn: "host"` on every device
 *   at once, then a sync of each; raw: the host-staged all-reduce of
 *   `collectives_bench.ts` (copy to staging everywhere, map all, sum on the
 *   CPU, 4 MiB chunked writes to every device, a completion wait on each).
 *
 * Every Deno completion wait lasts at least 10 ms after the device is done,
 * so small transfers measure that wait on both sides.
 *
 * @module
 */

import { type ComputeClient, createClient, type Handle } from "../mod.ts";
import { chunked, rawBuffers, sourceData, sumInto } from "./_collectives_raw.ts";
import { interleave, rawTransfer } from "./_raw.ts";
import type { ScalingPoint, ScalingSeries } from "./_scaling_report.ts";

/** What the transfer series run on. */
export interface IoContext {
  /** The client of the transfers (the all-reduce opens clients of its own). */
  readonly client: ComputeClient;
  /** Its device, which the raw transfers use too. */
  readonly device: GPUDevice;
  /** Fewer reps. */
  readonly quick: boolean;
  /** The largest transfer, and the largest all-reduce per device, in bytes. */
  readonly maxBytes: number;
}

type Side = "runtime" | "raw";
const CHUNK = 4 << 20;
const KiB = 1024;
const MiB = 1024 * KiB;

/** Runs each side `warm` times untimed, then `reps` times interleaved; the minimum of what each run returned. */
export async function measurePairAsync(
  sides: Record<Side, () => Promise<number>>,
  warm: number,
  reps: number,
): Promise<Record<Side, number>> {
  for (let i = 0; i < warm; i++) {
    await sides.runtime();
    await sides.raw();
  }
  const order: Side[] = [];
  interleave(["runtime", "raw"], reps, (name) => order.push(name as Side));
  const got: Record<Side, number[]> = { runtime: [], raw: [] };
  for (const side of order) got[side].push(await sides[side]());
  return { runtime: Math.min(...got.runtime), raw: Math.min(...got.raw) };
}

/** The largest allocation the runtime serves on a client's device (its largest page), in bytes. */
export function largestAllocation(client: ComputeClient): number {
  const m = client.properties.memory;
  return Math.min(Math.floor(m.maxPageSize / m.alignment) * m.alignment, m.maxBufferSize);
}

/** Sizes of `ladder` up to `maxBytes` and the device's limit, those above left out with a note. */
function sizesUpTo(
  ladder: readonly number[],
  limits: { maxBytes: number; device: number; deviceWhy: string },
  notes: string[],
): number[] {
  const out: number[] = [];
  const mib = (b: number) => b >= MiB ? `${b / MiB} MiB` : `${b / KiB} KiB`;
  for (const s of ladder) {
    if (s > limits.device) notes.push(`${mib(s)} skipped: above ${limits.deviceWhy} (${limits.device} B)`);
    else if (s > limits.maxBytes) notes.push(`${mib(s)} skipped: above MAX_BYTES (${limits.maxBytes} B)`);
    else out.push(s);
  }
  return out;
}

/** 4 KiB to 1 GiB: ×4 steps up to 1 MiB, then ×2 (so that a device limit of 128 MiB is a point). */
const TRANSFER_SIZES = [4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, ...Array.from({ length: 11 }, (_, k) => MiB << k)];
/** 1 MiB to 256 MiB per device, ×2 steps. */
const REDUCE_SIZES = Array.from({ length: 9 }, (_, k) => MiB << k);

/** Reps for a transfer of `bytes`: more for the small ones, whose timings are short and noisy. */
function repsFor(bytes: number, quick: boolean): number {
  if (quick) return bytes <= 16 * MiB ? 5 : 3;
  return bytes <= MiB ? 15 : bytes <= 16 * MiB ? 9 : bytes <= 256 * MiB ? 5 : 3;
}

/** Host data of `bytes` bytes: a pattern of 32-bit words, doubled with `copyWithin`. */
function payload(bytes: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bytes);
  const words = new Uint32Array(out.buffer, 0, Math.min(bytes, MiB) / 4);
  for (let i = 0; i < words.length; i++) words[i] = Math.imul(i, 2654435761) >>> 0;
  for (let have = Math.min(bytes, MiB); have < bytes; have *= 2) out.copyWithin(have, 0, Math.min(have, bytes - have));
  return out;
}

/** A few bytes of `got` (first, middle, last) against `want`. */
function check(what: string, got: Uint8Array, want: Uint8Array): void {
  if (got.byteLength !== want.byteLength) throw new Error(`${what}: read ${got.byteLength} B, want ${want.byteLength}`);
  for (const i of [0, want.byteLength >> 1, want.byteLength - 1]) {
    if (got[i] !== want[i]) throw new Error(`${what}: byte ${i} is ${got[i]}, want ${want[i]}`);
  }
}

/**
 * Write and read GB/s for 4 KiB to 1 GiB (`TRANSFER_SIZES`), each
 * size on fresh buffers (runtime and raw), released before the next size.
 *
 * @returns The `write` and `read` series (whichever were asked for).
 */
export async function transfers(
  ctx: IoContext,
  want: { read: boolean; write: boolean },
): Promise<{ write?: ScalingSeries; read?: ScalingSeries }> {
  const { client, device, quick } = ctx;
  const notes: string[] = [];
  const limit = largestAllocation(client);
  const sizes = sizesUpTo(TRANSFER_SIZES, {
    maxBytes: ctx.maxBytes,
    device: limit,
    deviceWhy: "the runtime's largest allocation (maxStorageBufferBindingSize, maxBufferSize)",
  }, notes);
  const data = payload(Math.max(...sizes));
  const writes: ScalingPoint[] = [];
  const reads: ScalingPoint[] = [];
  for (const size of sizes) {
    const view = data.subarray(0, size);
    const h: Handle = client.empty(size);
    const path = rawTransfer(device, size, "scaling raw transfer");
    const gbps = (ms: number) => size / (ms * 1e6);
    const rawWrite = () => path.write(view);
    const runtimeWrite = async () => {
      const t0 = performance.now();
      client.write(h, view);
      await client.sync();
      return performance.now() - t0;
    };
    const reps = repsFor(size, quick);
    if (want.write) {
      const got = await measurePairAsync({ runtime: runtimeWrite, raw: rawWrite }, 1, reps);
      writes.push({ x: size, runtime: gbps(got.runtime), raw: gbps(got.raw), unit: "GB/s" });
    } else {
      await runtimeWrite();
      await rawWrite();
    }
    if (want.read) {
      let last: Uint8Array | null = null;
      const got = await measurePairAsync(
        {
          runtime: async () => {
            const t0 = performance.now();
            last = await client.read(h);
            return performance.now() - t0;
          },
          raw: async () => {
            const { ms, bytes } = await path.read();
            check(`raw read of ${size} B`, bytes, view);
            return ms;
          },
        },
        1,
        reps,
      );
      check(`client.read of ${size} B`, last!, view);
      last = null;
      reads.push({ x: size, runtime: gbps(got.runtime), raw: gbps(got.raw), unit: "GB/s" });
    }
    h.release();
    client.memoryCleanup();
    path.destroy();
  }
  const series = (title: string, points: ScalingPoint[]): ScalingSeries => ({
    title,
    xLabel: "bytes",
    cost: "rate",
    estimator: "minimum of 3 to 15 reps",
    points,
    notes: [...notes],
  });
  return {
    ...(want.write ? { write: series("write, until the device ran it", writes) } : {}),
    ...(want.read ? { read: series("read into a fresh host buffer", reads) } : {}),
  };
}

/**
 * All-reduce (f32 sum) ms from 1 MiB to 256 MiB per device (×2 steps) over
 * 2 and 4 logical devices: clients at device indices 1 to 4 (opened here)
 * next to as many raw devices, each from its own adapter request with the
 * adapter's limits.
 *
 * @returns One series per device count, named `allreduce_<n>`.
 */
export async function allReduce(ctx: IoContext, counts: readonly number[]): Promise<Record<string, ScalingSeries>> {
  const most = Math.max(...counts);
  const clients: ComputeClient[] = [];
  for (let i = 0; i < most; i++) clients.push(await createClient({ deviceIndex: i + 1 }));
  const raw: GPUDevice[] = [];
  for (let i = 0; i < most; i++) {
    const adapter = (await navigator.gpu.requestAdapter())!;
    const requiredLimits = {
      maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    };
    raw.push(await adapter.requestDevice({ label: `scaling raw device ${i}`, requiredLimits }));
  }
  const out: Record<string, ScalingSeries> = {};
  for (const count of counts) {
    const notes: string[] = [];
    const limit = Math.min(largestAllocation(clients[0]!), raw[0]!.limits.maxBufferSize);
    const sizes = sizesUpTo(REDUCE_SIZES, {
      maxBytes: ctx.maxBytes,
      device: limit,
      deviceWhy: "the runtime's largest allocation",
    }, notes);
    const set = clients.slice(0, count);
    const devs = raw.slice(0, count);
    const devices = set.map((c) => c.deviceId.index);
    const points: ScalingPoint[] = [];
    for (const bytes of sizes) {
      const n = bytes / 4;
      const src = set.map((c, i) => c.create(sourceData(n, i)));
      const dst = set.map((c) => c.empty(bytes));
      const r = rawBuffers(devs, n, CHUNK);
      const rawHostSum = async () => {
        const t0 = performance.now();
        devs.forEach((d, i) => {
          const e = d.createCommandEncoder({ label: `scaling raw all-reduce copy ${i}` });
          e.copyBufferToBuffer(r.src[i]!, 0, r.staging[i]!, 0, bytes);
          d.queue.submit([e.finish()]);
        });
        await Promise.all(r.staging.map((s) => s.mapAsync(GPUMapMode.READ)));
        const views = r.staging.map((s) => new Float32Array(s.getMappedRange()));
        const acc = views[0]!;
        for (const v of views.slice(1)) sumInto(acc, v);
        devs.forEach((d, i) => chunked(d, r.dst[i]!, acc, CHUNK));
        r.staging.forEach((s) => s.unmap()); // after the writes: unmap detaches every range handed out
        await Promise.all(devs.map((d) => d.queue.onSubmittedWorkDone()));
        return performance.now() - t0;
      };
      const runtime = async () => {
        const t0 = performance.now();
        await Promise.all(
          set.map((c, i) => c.allReduce(src[i]!, dst[i]!, { dtype: "f32", devices, reduceOn: "host" })),
        );
        await Promise.all(set.map((c) => c.sync()));
        return performance.now() - t0;
      };
      const reps = ctx.quick ? 3 : bytes <= 4 * MiB ? 9 : bytes <= 16 * MiB ? 5 : 3;
      const got = await measurePairAsync({ runtime, raw: rawHostSum }, 1, reps);
      // Both sides' sums, checked at a few places: element k sums (k % 97) + 1000·i over the devices.
      const want = (k: number) => count * (k % 97) + 1000 * (count * (count - 1)) / 2;
      const probes = [0, n >> 1, n - 1];
      for (const [i, c] of set.entries()) {
        const v = await c.read(dst[i]!, Float32Array);
        for (const k of probes) if (v[k] !== want(k)) throw new Error(`all-reduce: device ${i} wrong at ${k}`);
      }
      for (const [i, d] of devs.entries()) {
        const e = d.createCommandEncoder({ label: `scaling raw all-reduce check ${i}` });
        e.copyBufferToBuffer(r.dst[i]!, 0, r.staging[i]!, 0, bytes);
        d.queue.submit([e.finish()]);
        await r.staging[i]!.mapAsync(GPUMapMode.READ);
        const v = new Float32Array(r.staging[i]!.getMappedRange());
        const wrong = probes.find((k) => v[k] !== want(k));
        r.staging[i]!.unmap();
        if (wrong !== undefined) throw new Error(`raw all-reduce: device ${i} wrong at ${wrong}`);
      }
      points.push({ x: bytes, runtime: got.runtime, raw: got.raw, unit: "ms" });
      for (const h of [...src, ...dst]) h.release();
      for (const c of set) c.memoryCleanup();
      for (const b of [...r.src, ...r.dst, ...r.staging]) b.destroy();
    }
    out[`allreduce_${count}`] = {
      title: `all-reduce (f32 sum, reduced on the host) over ${count} devices`,
      xLabel: "bytes",
      cost: "total",
      estimator: "minimum of 3 to 9 reps",
      points,
      notes,
    };
  }
  for (const c of clients) c.destroy();
  for (const d of raw) d.destroy();
  return out;
}

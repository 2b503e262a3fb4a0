/**
 * Soak test (the reliability acceptance): 200,000 launches on three streams,
 * with temporaries of varying sizes allocated and released at every step,
 * uploads, overwrites, flushes, cross-stream bindings and cross-stream reads,
 * and periodic reads that must equal a CPU model of every stream's state,
 * exactly.
 *
 * After a warm-up (the first tenth of the launches) the device memory the
 * pools reserve must not grow past the warm-up's peak, no `GPUBuffer` and no
 * pipeline may be created, and the JS heap must stay flat within a tolerance.
 * `deno test` exposes no `gc()`, so the heap is compared through the lowest
 * sample of a window (what survived the latest collection), and the bound is
 * generous: without a major collection, garbage promoted to the old
 * generation (mostly the bind groups that temporaries at new offsets need)
 * raises that floor by ~50 MiB over the run. With `--v8-flags=--expose-gc`
 * every sample follows a full collection and the bound is tight.
 *
 * The figures are printed at the end (also when a bound is exceeded) so they
 * can be quoted. `SOAK_LAUNCHES` (with `--allow-env`) sets another length.
 */

import assert from "node:assert/strict";
import type { ComputeClient, Handle } from "../../mod.ts";
import { defineLoopKernel, launchWithinBudget, type LoopKernel, type LoopLaunch } from "../_loop_budget.ts";
import { countSubmits, incKernel, readU32, rng, withClient } from "../_gpu.ts";
import { Kernel } from "../../mod.ts";
import { formatBytes } from "../../src/_util/format.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

function envInt(name: string, fallback: number): number {
  try {
    const v = Deno.env.get(name);
    return v === undefined ? fallback : Number.parseInt(v, 10);
  } catch {
    return fallback; // no --allow-env
  }
}

/** Total launches of the soak. */
const LAUNCHES = envInt("SOAK_LAUNCHES", 200_000);
/** Launches of the warm-up, after which memory must stay flat. */
const WARMUP = Math.floor(LAUNCHES / 10);
/** Rounds (one step per stream) between two checkpoints (read, compare, sample). */
const CHECK_EVERY = 48;
/** Most launches one step makes. */
const MAX_STEP_LAUNCHES = 5;
/** Steps of a stream between two temporaries of 1 to 4 MiB. */
const BIG_EVERY = 250;
/** Elements of each stream's state (different, so the streams' sizes differ). */
const LENGTHS = [256, 1000, 77];
/** Bytes the reservation may exceed the warm-up's peak by: none (the live set is bounded). */
const RESERVED_MARGIN = 0;
/**
 * Growth of the heap floor allowed after warm-up without `gc()`. Measured:
 * ~51 MiB of promoted garbage (~0.3 KB per launch, none of it reachable: with
 * `gc()` the floor moves by ~1 MiB). A runtime that retained each launch (its
 * info words and binding array, ≥ 100 B) would add ≥ 18 MB on top.
 */
const HEAP_MARGIN = 64 * MiB;
/**
 * Growth of the heap floor allowed after warm-up when `gc()` is exposed
 * (every sample follows a full collection). Measured: ~1 MiB; the bind group
 * cache alone swings by ~6 MiB between its clears, which the floor absorbs.
 */
const HEAP_MARGIN_GC = 8 * MiB;

/** Loop iterations of one invocation of a grid-strided loop over info word 0 elements. */
const strided = ({ count, info }: LoopLaunch) => Math.ceil(info[0]! / (count[0] * 64));

/** dst[i] = src[i] * k + c (u32, wrapping) for i < n; any number of workgroups. */
const affine = defineLoopKernel({
  name: "soak-affine",
  wgsl: `
struct Info { n: u32, k: u32, c: u32 }
@group(0) @binding(0) var<storage, read_write> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> info: Info;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) w: vec3u) {
  for (var i = g.x; i < info.n; i += w.x * 64u) { dst[i] = src[i] * info.k + info.c; }
}`,
}, strided);

/** a[i] = a[i] + b[i] * k (u32, wrapping) for i < n; any number of workgroups. */
const mix = defineLoopKernel({
  name: "soak-mix",
  wgsl: `
struct Info { n: u32, k: u32 }
@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> b: array<u32>;
@group(0) @binding(2) var<storage, read> info: Info;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) w: vec3u) {
  for (var i = g.x; i < info.n; i += w.x * 64u) { a[i] = a[i] + b[i] * info.k; }
}`,
}, strided);

/** Records the labels of the buffers `createBuffer` creates on a device until `stop()`. */
function watchBuffers(device: GPUDevice): { labels: string[]; stop: () => void } {
  const original = device.createBuffer;
  const labels: string[] = [];
  device.createBuffer = function (this: GPUDevice, d: GPUBufferDescriptor) {
    labels.push(d.label ?? "(unlabelled)");
    return original.call(this, d);
  };
  return { labels, stop: () => (device.createBuffer = original) };
}

const fmtMiB = formatBytes;

Deno.test({
  name: "soak: 200,000 launches on three streams stay exact, and memory and heap stay flat after warm-up",
  // Long-running: sanitizers add nothing here.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await withClient(async (root) => {
      const gc = (globalThis as { gc?: () => void }).gc;
      const heapMargin = gc ? HEAP_MARGIN_GC : HEAP_MARGIN;
      const submits = countSubmits(root.server.device);
      const r = rng(20240611);
      const streams: ComputeClient[] = [root.onStream(1), root.onStream(2), root.onStream(3)];
      const S = streams.length;
      const maxLen = Math.max(...LENGTHS);

      // A constant table owned by stream 0 and bound (read) by every stream: cross-stream pins.
      const tableModel = Uint32Array.from({ length: maxLen }, () => (r() * 2 ** 32) >>> 0);
      const table = root.create(tableModel);

      const model = LENGTHS.map((n) => Uint32Array.from({ length: n }, (_, i) => i * 7 + 1));
      const state: Handle[] = streams.map((s, i) => s.create(model[i]!));

      let launches = 0;
      const launch = (
        s: ComputeClient,
        kernel: Kernel | LoopKernel,
        count: number,
        buffers: Handle[],
        info?: Uint32Array,
      ) => {
        if (kernel instanceof Kernel) s.launch(kernel, [count], buffers, info);
        else launchWithinBudget(s, kernel, [count], buffers, info);
        launches++;
      };
      const wgFor = (n: number) => (r() < 0.8 ? 1 : Math.ceil(n / 64)); // mostly one workgroup
      const rand32 = () => (r() * 2 ** 32) >>> 0;
      const steps = streams.map(() => 0);
      /**
       * A temporary size in bytes: at least `min`, log-uniform up to `min` + 256 KiB, and every
       * `BIG_EVERY` steps of a stream 1 to 4 MiB (served by a larger pool than the rest).
       */
      const tempSize = (i: number, min: number) => {
        if (steps[i]! % BIG_EVERY === BIG_EVERY - 1) return min + Math.floor(1 * MiB + r() * 3 * MiB);
        return min + Math.floor(Math.exp(r() * Math.log(64 * KiB))) * 4;
      };

      const cpuAffine = (m: Uint32Array, k: number, c: number) => {
        for (let i = 0; i < m.length; i++) m[i] = (Math.imul(m[i]!, k) + c) >>> 0;
      };
      const cpuMix = (m: Uint32Array, b: Uint32Array, n: number, k: number) => {
        for (let i = 0; i < n; i++) m[i] = (m[i]! + Math.imul(b[i]!, k)) >>> 0;
      };

      /** One step of stream `i`: 3 to 5 launches; two or three temporaries allocated and released. */
      const step = (i: number) => {
        const s = streams[i]!;
        const n = LENGTHS[i]!;
        const m = model[i]!;
        // t = state * k + c, in a temporary larger than needed.
        steps[i]!++;
        const t = s.empty(tempSize(i, n * 4));
        const k = rand32() | 1;
        const c = rand32();
        launch(s, affine, wgFor(n), [state[i]!, t], new Uint32Array([n, k, c]));
        cpuAffine(m, k, c);
        const x = r();
        if (x < 0.125) {
          // An uploaded temporary mixed in.
          const data = Uint32Array.from({ length: n }, rand32);
          const u = s.create(data);
          const ku = rand32();
          launch(s, mix, wgFor(n), [t, u], new Uint32Array([n, ku]));
          cpuMix(m, data, n, ku);
          u.release();
        } else if (x < 0.375) {
          // The shared table, owned by stream 0.
          const kt = rand32();
          launch(s, mix, wgFor(n), [t, table], new Uint32Array([n, kt]));
          cpuMix(m, tableModel, n, kt);
        } else if (x < 0.4375) {
          // Another stream's state, still being written by that stream's queued work.
          const o = (i + 1 + Math.floor(r() * (S - 1))) % S;
          const nn = Math.min(n, LENGTHS[o]!);
          const ko = rand32();
          launch(s, mix, wgFor(nn), [t, state[o]!], new Uint32Array([nn, ko]));
          cpuMix(m, model[o]!, nn, ko);
        }
        // inc over the whole temporary (arrayLength): every element below n gets + 1.
        launch(s, incKernel, Math.ceil(n / 64), [t]);
        cpuAffine(m, 1, 1);
        if (r() < 0.5) {
          launch(s, incKernel, Math.ceil(n / 64), [t]);
          cpuAffine(m, 1, 1);
        }
        // The next state, in a fresh allocation; the old one is released.
        const next = s.empty(n * 4);
        launch(s, affine, wgFor(n), [t, next], new Uint32Array([n, 1, 0]));
        state[i]!.release();
        state[i] = next;
        t.release();
        if (r() < 1 / 64) {
          // Overwrite the state from the host.
          const data = Uint32Array.from({ length: n }, rand32);
          s.write(state[i]!, data);
          m.set(data);
        }
      };

      let checkpoints = 0;
      const checkAll = async () => {
        // Each stream reads its own state; one state (in turn) is also read through another stream.
        const j = checkpoints++ % S;
        const reader = streams[(j + 1) % S]!;
        const [own, cross] = await Promise.all([
          Promise.all(streams.map((s, i) => readU32(s, state[i]!))),
          readU32(reader, state[j]!),
        ]);
        own.forEach((got, i) => {
          if (!got.every((v, e) => v === model[i]![e])) {
            const e = got.findIndex((v, e) => v !== model[i]![e]);
            assert.fail(
              `stream ${i + 1} after ${launches} launches: element ${e} is ${got[e]}, the CPU model says ${
                model[i]![e]
              }`,
            );
          }
        });
        assert.deepEqual(cross, model[j], `stream ${j + 1}'s state read through another stream`);
      };

      interface Sample {
        launches: number;
        reserved: number;
        inUse: number;
        allocs: number;
        heap: number;
        rss: number;
      }
      const samples: Sample[] = [];
      const sample = async (): Promise<Sample> => {
        await Promise.all(streams.map((s) => s.sync()));
        gc?.();
        const u = root.memoryUsage();
        const m = Deno.memoryUsage();
        const smp = {
          launches,
          reserved: u.bytesReserved,
          inUse: u.bytesInUse,
          allocs: u.numberAllocs,
          heap: m.heapUsed,
          rss: m.rss,
        };
        samples.push(smp);
        return smp;
      };

      const start = performance.now();
      const first = await sample();
      let round = 0;
      let warmupEnd: Sample | null = null;
      let warmMaxReserved = first.reserved;
      let buffersAfterWarmup: ReturnType<typeof watchBuffers> | null = null;
      let pipelinesAtWarmup = 0;
      let bindGroupsAtWarmup = 0;
      let reservedViolation: string | null = null;
      while (launches < LAUNCHES) {
        for (let i = 0; i < S && launches < LAUNCHES; i++) {
          const j = Math.floor(r() * S);
          if (LAUNCHES - launches >= MAX_STEP_LAUNCHES) step(j);
          else {
            // The last few launches, one at a time, so the total is exact.
            launch(streams[j]!, incKernel, Math.ceil(LENGTHS[j]! / 64), [state[j]!]);
            cpuAffine(model[j]!, 1, 1);
          }
        }
        round++;
        if (round % CHECK_EVERY === CHECK_EVERY / 2) await streams[round % S]!.flush(); // submit, raise errors
        if (round % CHECK_EVERY !== 0 && launches < LAUNCHES) continue;
        await checkAll();
        const smp = await sample();
        // Between checkpoints every temporary was released and every pin has completed.
        assert.equal(smp.allocs, S + 1, `live allocations after ${launches} launches: the states and the table`);
        if (warmupEnd === null) {
          warmMaxReserved = Math.max(warmMaxReserved, smp.reserved);
          if (launches >= WARMUP) {
            warmupEnd = smp;
            pipelinesAtWarmup = root.server.pipelinesCompiled;
            bindGroupsAtWarmup = root.server.bindGroupsCreated;
            buffersAfterWarmup = watchBuffers(root.server.device);
          }
        } else if (reservedViolation === null && smp.reserved > warmMaxReserved + RESERVED_MARGIN) {
          reservedViolation =
            `reserved ${smp.reserved} B after ${launches} launches, warm-up peak ${warmMaxReserved} B`;
        }
      }
      const elapsed = (performance.now() - start) / 1000;
      const createdLabels = buffersAfterWarmup?.labels ?? [];
      buffersAfterWarmup?.stop();
      submits.restore();
      assert.equal(launches, LAUNCHES);
      assert.ok(warmupEnd !== null);

      // Heap: the floor (lowest sample, i.e. after the latest collection) of the first fifth of the
      // samples after warm-up against the floor of the last fifth.
      const post = samples.filter((x) => x.launches >= warmupEnd!.launches);
      const w = Math.max(1, Math.floor(post.length / 5));
      const floor = (xs: Sample[]) => Math.min(...xs.map((x) => x.heap));
      const heapWarm = floor(post.slice(0, w));
      const heapEnd = floor(post.slice(-w));
      const last = samples[samples.length - 1]!;
      const maxOf = (xs: Sample[], f: (x: Sample) => number) => Math.max(...xs.map(f));

      console.log(
        [
          `soak: ${launches} launches on ${S} streams in ${elapsed.toFixed(1)} s (${
            (elapsed * 1e6 / launches).toFixed(1)
          } µs/launch), ${submits.count()} submits, ${samples.length - 1} checkpoints exact against the CPU model${
            gc ? ", gc() before each sample" : ""
          }`,
          `  reserved: start ${fmtMiB(first.reserved)}, warm-up peak ${fmtMiB(warmMaxReserved)} (${
            fmtMiB(warmupEnd.reserved)
          } at the end of warm-up, ${warmupEnd.launches} launches), max after warm-up ${
            fmtMiB(maxOf(post, (x) => x.reserved))
          }, end ${fmtMiB(last.reserved)} (${last.inUse} B in use in ${last.allocs} allocations)`,
          `  heap used: start ${fmtMiB(first.heap)}, end of warm-up ${fmtMiB(warmupEnd.heap)}, end ${
            fmtMiB(last.heap)
          }, max after warm-up ${fmtMiB(maxOf(post, (x) => x.heap))}; floor after warm-up ${fmtMiB(heapWarm)}, at end ${
            fmtMiB(heapEnd)
          } (growth ${fmtMiB(heapEnd - heapWarm)}, bound ${fmtMiB(heapMargin)})`,
          `  rss: start ${fmtMiB(first.rss)}, end of warm-up ${fmtMiB(warmupEnd.rss)}, end ${fmtMiB(last.rss)}`,
          `  pipelines ${root.server.pipelinesCompiled}, bind groups created ${root.server.bindGroupsCreated} (${
            root.server.bindGroupsCreated - bindGroupsAtWarmup
          } after warm-up), GPUBuffers created after warm-up ${createdLabels.length}`,
        ].join("\n"),
      );
      assert.equal(reservedViolation, null);
      assert.equal(root.server.pipelinesCompiled, pipelinesAtWarmup, "no pipeline compiled after warm-up");
      if (root.fastReads) {
        // Fast reads leave each staging buffer resting until its leftover map settles and prime more while
        // one rests (by design, bounded per size class); nothing else may be created.
        const staging = createdLabels.filter((l) => l.includes(" readback "));
        assert.deepEqual(
          createdLabels.filter((l) => !l.includes(" readback ")),
          [],
          "no other GPUBuffer after warm-up",
        );
        assert.ok(staging.length <= 64, `${staging.length} readback buffers primed after warm-up`);
      } else {
        assert.deepEqual(createdLabels, [], "no GPUBuffer created after warm-up");
      }
      assert.ok(
        heapEnd - heapWarm <= heapMargin,
        `heap floor grew by ${heapEnd - heapWarm} B after warm-up (bound ${heapMargin} B)`,
      );

      // Everything released and cleaned up: nothing is left reserved.
      state.forEach((h) => h.release());
      table.release();
      await Promise.all(streams.map((s) => s.sync()));
      root.memoryCleanup();
      await root.sync();
      assert.deepEqual(root.memoryUsage(), { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 });
    });
  },
});

/**
 * The host-side series of `scaling.ts`: launch cost against the number of
 * bindings and of info words, allocate + release against the number of live
 * allocations, and `graph.replay()` per dispatch against the graph's length,
 * each next to its raw WebGPU loop on the same device, every x and side of a
 * series interleaved rep by rep in a shuffled order (`interleave`), and the
 * minimum over reps reported: on the shared 2-core VM about a third of the
 * reps were interrupted (1.5–25× slower), which moved medians by up to 2×
 * from one run to the next, where the minimums agreed within a few percent.
 *
 * Every kernel is launched once and the client synced before anything is
 * timed: a pipeline's validation settles only when the event loop turns,
 * and until then its launches are held (`HeldWork`), which the timed loops,
 * never yielding, would otherwise measure.
 *
 * Only encoding is timed in the launch and replay loops: submits happen
 * outside the timed region, then the device is blocked on until idle
 * (`blockUntilIdle`), as in `launch_bench.ts` and `graph_bench.ts`, because
 * on the software adapter the device is the same CPU cores. The client's
 * `tasksMax` is above every loop's length, so no submit falls inside one
 * but those the runtime makes for another reason (a full info arena), which
 * each series counts and notes (`notedSubmits`).
 *
 * @module
 */

import type { ComputeClient, Graph, Handle } from "../mod.ts";
import { defineKernel } from "../mod.ts";
import {
  bindBuffers,
  blockUntilIdle,
  COPY_WGSL,
  encodeAlternating,
  interleave,
  MIX_WGSL,
  rawPipelines,
  storageLayout,
} from "./_raw.ts";
import type { ScalingPoint, ScalingSeries } from "./_scaling_report.ts";

/** What the host series run on. */
export interface HostContext {
  /** A client whose `tasksMax` is above every loop's length. */
  readonly client: ComputeClient;
  /** Its device, which the raw loops use too. */
  readonly device: GPUDevice;
  /** Fewer reps. */
  readonly quick: boolean;
}

type Side = "runtime" | "raw";

/** One variant of a series: which side, at which x, and one timed run returning its cost. */
export interface Variant {
  /** Which side. */
  readonly side: Side;
  /** The work. */
  readonly x: number;
  /** One run; returns its cost. */
  readonly run: () => number;
}

/**
 * Runs every variant `warm` times untimed, then `reps` times, all variants of
 * a rep in an order shuffled afresh each rep (`interleave`), so that the load
 * of a busy machine falls on every x and side alike; returns each x's minimums.
 */
export function measureAll(
  variants: readonly Variant[],
  warm: number,
  reps: number,
): Map<number, Record<Side, number>> {
  for (let i = 0; i < warm; i++) for (const v of variants) v.run();
  const got = variants.map(() => [] as number[]);
  const names = variants.map((_, i) => String(i));
  interleave(names, reps, (name) => {
    const i = Number(name);
    got[i]!.push(variants[i]!.run());
  });
  const out = new Map<number, Record<Side, number>>();
  variants.forEach((v, i) => {
    const m = out.get(v.x) ?? { runtime: NaN, raw: NaN };
    m[v.side] = Math.min(...got[i]!);
    out.set(v.x, m);
  });
  return out;
}

/** The points of `measureAll`'s minimums, by ascending x. */
function pointsOf(got: Map<number, Record<Side, number>>, unit: string): ScalingPoint[] {
  return [...got.entries()].sort(([a], [b]) => a - b).map(([x, m]) => ({ x, runtime: m.runtime, raw: m.raw, unit }));
}

/**
 * Notes the submits one run of each runtime variant makes besides the one
 * that ends it (counted on `device.queue.submit`, in an untimed run).
 */
function notedSubmits(device: GPUDevice, variants: readonly Variant[], what: string, notes: string[]): void {
  const queue = device.queue;
  const submit = queue.submit;
  let count = 0;
  queue.submit = function (buffers: GPUCommandBuffer[]) {
    count++;
    return submit.call(queue, buffers);
  };
  try {
    for (const v of variants) {
      if (v.side !== "runtime") continue;
      count = 0;
      v.run();
      if (count > 1) notes.push(`${v.x} ${what}: the runtime submits ${count - 1} time(s) inside each timed loop`);
    }
  } finally {
    queue.submit = submit;
  }
}

/** Submits the client's work (a flush submits before it returns) and blocks until the device is idle. */
function flushAndSettle(ctx: HostContext): void {
  ctx.client.flush().catch((e) => {
    console.error(e);
    Deno.exit(1);
  });
  blockUntilIdle(ctx.device);
}

/**
 * The runtime's side of a point: µs per unit of work of `loop` (timed), then
 * a flush and a wait for the device (untimed).
 */
function runtimeSide(ctx: HostContext, x: number, units: number, loop: () => void): Variant {
  return {
    side: "runtime",
    x,
    run: () => {
      const t0 = performance.now();
      loop();
      const t = performance.now() - t0;
      flushAndSettle(ctx);
      return (t * 1000) / units;
    },
  };
}

/**
 * The raw side of a point: µs per unit of work of `loop`, which encodes into
 * one open pass (timed). Untimed: `open` right after the pass opens, `close`
 * before it ends; then it is submitted and the device waited for.
 */
function rawSide(
  device: GPUDevice,
  x: number,
  units: number,
  parts: {
    open?: (pass: GPUComputePassEncoder) => void;
    loop: (pass: GPUComputePassEncoder) => void;
    close?: () => void;
  },
): Variant {
  return {
    side: "raw",
    x,
    run: () => {
      const encoder = device.createCommandEncoder({ label: "scaling raw encoder" });
      const pass = encoder.beginComputePass({ label: "scaling raw pass" });
      parts.open?.(pass);
      const t0 = performance.now();
      parts.loop(pass);
      const t = performance.now() - t0;
      parts.close?.();
      pass.end();
      device.queue.submit([encoder.finish()]);
      blockUntilIdle(device);
      return (t * 1000) / units;
    },
  };
}

const LAUNCHES = 1024;
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** A kernel of `k` read-write storage bindings that reads them all: `b0[0] = b0[0] + b1[0] + … + 1`. */
export function bindingsWgsl(k: number): string {
  const decls = Array.from(
    { length: k },
    (_, i) => `@group(0) @binding(${i}) var<storage, read_write> b${i}: array<u32>;`,
  );
  const sum = Array.from({ length: k - 1 }, (_, i) => ` + b${i + 1}[0]`).join("");
  return `${decls.join("\n")}\n@compute @workgroup_size(1) fn main() { b0[0] = b0[0]${sum} + 1u; }`;
}

/** Host µs per launch of a one-workgroup kernel of 1, 4, 8 and 16 storage bindings (1,024 launches per rep). */
export async function launchBindings(ctx: HostContext): Promise<ScalingSeries> {
  const { client, device } = ctx;
  const notes: string[] = [];
  const most = client.properties.hardware.maxBindings;
  const one = [1];
  const variants: Variant[] = [];
  const cleanup: (() => void)[] = [];
  for (const k of [1, 4, 8, 16]) {
    if (k > most) {
      notes.push(`${k} bindings skipped: the device allows ${most} storage bindings besides the info binding`);
      continue;
    }
    const wgsl = bindingsWgsl(k);
    const kernel = defineKernel({ name: `scaling bindings ${k}`, wgsl });
    const handles = Array.from({ length: k }, () => client.create(new Uint32Array(64)));
    const layout = storageLayout(device, k, { label: `scaling raw layout ${k}` });
    const [pipeline] = rawPipelines(device, layout, [wgsl], `scaling raw pipeline ${k}`);
    const rawBufs = handles.map((_, i) => device.createBuffer({ label: `scaling raw b${i}`, size: 256, usage }));
    const bindGroup = bindBuffers(device, layout, rawBufs, `scaling raw bind group ${k}`);
    client.launch(kernel, one, handles); // validated before it is timed (see the header)
    variants.push(
      runtimeSide(ctx, k, LAUNCHES, () => {
        for (let i = 0; i < LAUNCHES; i++) client.launch(kernel, one, handles);
      }),
      rawSide(device, k, LAUNCHES, {
        open: (pass) => pass.setPipeline(pipeline),
        loop: (pass) => {
          for (let i = 0; i < LAUNCHES; i++) {
            pass.setBindGroup(0, bindGroup);
            pass.dispatchWorkgroups(1);
          }
        },
      }),
    );
    cleanup.push(() => {
      for (const h of handles) h.release();
      for (const b of rawBufs) b.destroy();
    });
  }
  await client.sync();
  notedSubmits(device, variants, "bindings", notes);
  const reps = ctx.quick ? 15 : 60;
  const points = pointsOf(measureAll(variants, ctx.quick ? 10 : 40, reps), "µs/launch");
  for (const c of cleanup) c();
  return {
    title: "launch host cost against storage bindings",
    xLabel: "bindings",
    cost: "total",
    estimator: `minimum of ${reps} reps of ${LAUNCHES} launches`,
    points,
    notes,
  };
}

const INFO_WGSL = `
@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@group(0) @binding(1) var<storage, read> info: array<u32>;
@compute @workgroup_size(1) fn main() { x[0] = x[0] + info[0]; }`;

/**
 * Host µs per launch of a one-buffer kernel with 1 to 64 info words that
 * change at every launch (1,024 launches per rep). Raw: the words copied
 * into a host arena, bound with a dynamic offset, the arena uploaded once
 * per submit (outside the timed region, like the client's arena upload).
 * The runtime's arena holds 64 KiB (or `min(tasksMax, 1024)` aligned infos)
 * and submits when full, which 1,024 launches of more than 16 words do
 * inside the loop where the alignment is 64 B or less (noted per size).
 */
export async function launchInfo(ctx: HostContext): Promise<ScalingSeries> {
  const { client, device } = ctx;
  const kernel = defineKernel({ name: "scaling info", wgsl: INFO_WGSL });
  const x = client.create(new Uint32Array(64));
  const xs = [x];
  const one = [1];
  const layout = storageLayout(device, 1, { dynamicInfo: true, label: "scaling raw info layout" });
  const [pipeline] = rawPipelines(device, layout, [INFO_WGSL], "scaling raw info pipeline");
  const rawX = device.createBuffer({ label: "scaling raw x", size: 256, usage });
  const align = Math.max(device.limits.minStorageBufferOffsetAlignment, device.limits.minUniformBufferOffsetAlignment);
  const dyn = new Uint32Array(1);
  const variants: Variant[] = [];
  const arenas: GPUBuffer[] = [];
  for (const words of [1, 2, 4, 8, 16, 32, 64]) {
    const infos = Array.from({ length: LAUNCHES }, (_, i) => {
      const w = new Uint32Array(words);
      for (let k = 0; k < words; k++) w[k] = i * 7 + k;
      return w;
    });
    const stride = Math.ceil((words * 4) / align) * align;
    const arena = device.createBuffer({ label: `scaling raw arena ${words}`, size: LAUNCHES * stride, usage });
    arenas.push(arena);
    const arenaHost = new Uint32Array((LAUNCHES * stride) / 4);
    client.launch(kernel, one, xs, infos[0]); // validated before it is timed (see the header)
    const bindGroup = device.createBindGroup({
      label: `scaling raw info bind group ${words}`,
      layout,
      entries: [
        { binding: 0, resource: { buffer: rawX } },
        { binding: 1, resource: { buffer: arena, offset: 0, size: words * 4 } },
      ],
    });
    variants.push(
      runtimeSide(ctx, words, LAUNCHES, () => {
        for (let i = 0; i < LAUNCHES; i++) client.launch(kernel, one, xs, infos[i]);
      }),
      rawSide(device, words, LAUNCHES, {
        open: (pass) => pass.setPipeline(pipeline),
        loop: (pass) => {
          for (let i = 0; i < LAUNCHES; i++) {
            arenaHost.set(infos[i]!, (i * stride) / 4);
            dyn[0] = i * stride;
            pass.setBindGroup(0, bindGroup, dyn, 0, 1);
            pass.dispatchWorkgroups(1);
          }
        },
        close: () => device.queue.writeBuffer(arena, 0, arenaHost), // once per submit, as the client's arena
      }),
    );
  }
  await client.sync();
  const notes: string[] = [];
  notedSubmits(device, variants, "info words", notes);
  const reps = ctx.quick ? 15 : 60;
  const points = pointsOf(measureAll(variants, ctx.quick ? 10 : 40, reps), "µs/launch");
  x.release();
  rawX.destroy();
  for (const a of arenas) a.destroy();
  return {
    title: "launch host cost against info words",
    xLabel: "info words",
    cost: "total",
    estimator: `minimum of ${reps} reps of ${LAUNCHES} launches`,
    points,
    notes,
  };
}

/** A deterministic stream of 32-bit numbers. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
}

/**
 * µs per allocate + release with 1k, 10k and 100k allocations live (sizes
 * 256 B to 2 KiB): each op releases a live allocation picked at random and
 * allocates a new one of a random size in its place, the same sequence on
 * both sides. Runtime: `release()` and `client.empty(n)` on a stream of its
 * own per count; raw: `destroy()` and `createBuffer`.
 */
export function alloc(ctx: HostContext): ScalingSeries {
  const { client, device } = ctx;
  const notes: string[] = [];
  const OPS = 2000;
  const sizeOf = (r: number) => 256 * (1 + (r % 8));
  const variants: Variant[] = [];
  const cleanup: (() => void)[] = [];
  [1000, 10_000, 100_000].forEach((live, k) => {
    const c = client.onStream(100 + k);
    const next = lcg(live);
    const t0 = performance.now();
    const handles: Handle[] = [];
    for (let i = 0; i < live; i++) handles.push(c.empty(sizeOf(next())));
    const fillRuntime = performance.now() - t0;
    const t1 = performance.now();
    const buffers: GPUBuffer[] = [];
    for (let i = 0; i < live; i++) {
      buffers.push(device.createBuffer({ label: "scaling raw live", size: sizeOf(next()), usage }));
    }
    const fillRaw = performance.now() - t1;
    notes.push(
      `filling ${live} live: runtime ${(fillRuntime * 1000 / live).toFixed(3)} µs per allocation, raw ${
        (fillRaw * 1000 / live).toFixed(3)
      }`,
    );
    // Both sides draw from their own copy of one sequence, so they release and allocate alike.
    const seqRuntime = lcg(live * 31 + 7);
    const seqRaw = lcg(live * 31 + 7);
    variants.push({
      side: "runtime",
      x: live,
      run: () => {
        const t = performance.now();
        for (let i = 0; i < OPS; i++) {
          const j = seqRuntime() % live;
          handles[j]!.release();
          handles[j] = c.empty(sizeOf(seqRuntime()));
        }
        return ((performance.now() - t) * 1000) / OPS;
      },
    }, {
      side: "raw",
      x: live,
      run: () => {
        const t = performance.now();
        for (let i = 0; i < OPS; i++) {
          const j = seqRaw() % live;
          buffers[j]!.destroy();
          buffers[j] = device.createBuffer({ label: "scaling raw live", size: sizeOf(seqRaw()), usage });
        }
        return ((performance.now() - t) * 1000) / OPS;
      },
    });
    cleanup.push(() => {
      for (const h of handles) h.release();
      c.memoryCleanup();
      for (const b of buffers) b.destroy();
    });
  });
  const reps = ctx.quick ? 5 : 11;
  const points = pointsOf(measureAll(variants, ctx.quick ? 1 : 2, reps), "µs/op");
  for (const c of cleanup) c();
  return {
    title: "allocate + release against live allocations",
    xLabel: "live allocations",
    cost: "per-unit",
    estimator: `minimum of ${reps} reps of ${OPS} ops`,
    points,
    notes,
  };
}

/** The longest graph `replay` measures; the client's `tasksMax` must be above it. */
export const LONGEST_GRAPH = 100_000;

/**
 * µs per dispatch of `graph.replay()` for graphs of 10 to 100k launches
 * (alternating two one-workgroup kernels over two buffers, as
 * `graph_bench.ts`), ⌈4,096 ÷ L⌉ replays per rep, next to the raw loop
 * re-encoding the same dispatches into an open pass (`encodeAlternating`).
 */
export async function replay(ctx: HostContext): Promise<ScalingSeries> {
  const { client, device } = ctx;
  const mix = defineKernel({ name: "scaling mix", wgsl: MIX_WGSL });
  const copy = defineKernel({ name: "scaling copy", wgsl: COPY_WGSL });
  const layout = storageLayout(device, 2, { label: "scaling raw replay layout" });
  const pipelines = rawPipelines(device, layout, [MIX_WGSL, COPY_WGSL], "scaling raw replay pipeline");
  const a = client.create(new Float32Array(64).fill(1));
  const b = client.create(new Float32Array(64).fill(2));
  const ab = [a, b];
  const one = [1];
  const rawA = device.createBuffer({ label: "scaling raw a", size: 256, usage });
  const rawB = device.createBuffer({ label: "scaling raw b", size: 256, usage });
  const bindGroup = bindBuffers(device, layout, [rawA, rawB], "scaling raw replay bind group");
  const TARGET = 4096;
  const variants: Variant[] = [];
  const graphs: Graph[] = [];
  for (const length of [10, 100, 1000, 10_000, LONGEST_GRAPH]) {
    const reps = Math.ceil(TARGET / length);
    const graph = await client.capture(() => {
      for (let i = 0; i < length; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
    });
    graphs.push(graph);
    const dispatches = reps * length;
    variants.push(
      runtimeSide(ctx, length, dispatches, () => {
        for (let r = 0; r < reps; r++) graph.replay();
      }),
      rawSide(device, length, dispatches, {
        loop: (pass) =>
          encodeAlternating(pass, { pipelines, bindGroup, reps, length, groups: 1, skipRepeatedBinds: false }),
      }),
    );
  }
  await client.sync();
  const notes: string[] = [];
  notedSubmits(device, variants, "launches", notes);
  const reps = ctx.quick ? 5 : 15;
  const points = pointsOf(measureAll(variants, ctx.quick ? 3 : 10, reps), "µs/dispatch");
  for (const g of graphs) g.destroy();
  a.release();
  b.release();
  rawA.destroy();
  rawB.destroy();
  return {
    title: "graph.replay() per dispatch against the graph's launches",
    xLabel: "launches",
    cost: "per-unit",
    estimator: `minimum of ${reps} reps of ⌈${TARGET} ÷ L⌉ replays`,
    points,
    notes,
  };
}

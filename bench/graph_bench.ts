/**
 * Graph replay: host time per dispatch to re-encode a captured sequence of L
 * launches (`graph.replay()`), next to launching the same sequence with
 * `client.launch` and to the raw WebGPU floor (one open pass, prebuilt bind
 * groups, `setPipeline` when it changes, `setBindGroup` + `dispatchWorkgroups`
 * per dispatch), in one group per sequence length and kernel size.
 *
 * Each timed iteration encodes about 1,024 dispatches (⌈1024 / L⌉ repetitions
 * of the sequence), and only encoding is timed: submits happen outside the
 * timed region, and each iteration then blocks until the device is idle and
 * has finished its post-completion work (`blockUntilIdle` in `_raw.ts`),
 * because on the software adapter the device is the same CPU cores and its
 * execution of one iteration's dispatches would otherwise overlap the next
 * iteration's timed encoding. It blocks rather than awaits: an await sleeps
 * the thread for Deno's 10 ms poll interval, and the encoding after such a
 * sleep runs on cold caches, 1.5–2× slower and scattered on the 2-core VM.
 * The client's `tasksMax` is above 1,024 here.
 *
 * Every case runs 300 untimed iterations (env `WARMUP`) at its first call,
 * before `Deno.bench` times 100. The raw floor is one long loop, which V8
 * optimizes fully at once; replay and launch are many short calls through the
 * runtime, which V8 first runs in its mid-tier (Maglev) code, 1.2–1.4× slower
 * on the 2-core VM, and optimizes fully only after thousands of calls.
 * `Deno.bench`'s own `warmup` option does not give that: it stops early
 * (a case given `warmup: 200` was called about 106 times in all, and a 0.3 ms
 * function 167 times for `n: 100`).
 *
 * Beside the floor, "raw, repeated binds skipped" is the same loop with the
 * one saving the runtime makes on every path: a bind group already bound
 * under the same pipeline is not set again. Only L = 1 repeats a bind group,
 * so only there do the two raw loops differ.
 *
 * A third raw loop, "raw, encoder opened in the timed region", also times
 * making the encoder and pass, because the runtime's per-submission setup is
 * inside its own timed region: on the software adapter the stream opens its
 * next encoder and pass at the first replay after a submit; on hardware
 * adapters it opens them right after the submit (`openPassAhead`), and the
 * first commands into a pass opened before the idle wait can take longer.
 * On the H200 the two raw loops differ by no more than the host's noise.
 *
 * A fourth, "raw, on the runtime's buffers", is the floor's loop over the
 * runtime's own memory: `a` and `b` are slices of one pool page, as in the
 * graph. It separates what the memory layout costs from what the runtime's
 * code costs: on llvmpipe, two bindings in one buffer make the driver's
 * per-dispatch allocations small enough for glibc's fastbins, and their
 * merging later lands in a timed encoding (`bench/RESULTS.md`, run 21).
 *
 * The sequence alternates two kernels (an elementwise `a = a * 0.5 + b` and a
 * copy back), so the pipeline changes at every dispatch, as in real graphs.
 *
 * A process that encodes thousands of iterations without yielding to the
 * event loop drifts. On the 2-core VM, the same raw floor run six times in a
 * row per group stayed within 2% of the group's first run in 8 of 10 repeats
 * over the first two groups (L = 10, then 1,000); in a third group (L = 10
 * again) it started 19% above the first group's floor and reached 1.25× its
 * own first run within five repeats. `graph_groups.sh` therefore runs each
 * group in a fresh process and summarizes the ratios (`graph_summary.ts`).
 *
 * Where the host's speed changes from one case to the next (on the H200
 * machine the identical raw loop read 0.71–1.46× the floor, pinned to four
 * cores or not), env `ROUNDS=k` registers every group k times ("…, round 3
 * of k"), each round after the first in a fresh shuffled order, and `N` sets
 * the timed iterations per round (default 100); `graph_summary.ts` pools the
 * rounds. So every case samples the whole run, not one stretch of it. With
 * `ROUNDS=20 N=10` the identical raw loop read 0.92–1.08× over four runs there. Not on the
 * 2-core VM: switching cases every dozen iterations made the raw floor there
 * 1.6–1.8× slower per dispatch (`bench/RESULTS.md`, run 22).
 *
 * Run: `bash bench/graph_groups.sh` (every group in its own process), or
 * `deno bench --allow-env bench/graph_bench.ts` (all groups in one; with
 * `LP_NUM_THREADS=0` on the software adapter for steadier figures; env
 * `LENGTHS=1,1000` picks sequence lengths, `WORKGROUPS=1,256` the kernel
 * sizes, `WARMUP=` the warm-up iterations).
 */

import { createClient, defineKernel } from "../mod.ts";
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

const client = await createClient({ tasksMax: 4096 });
const device = client.server.device;
const mix = defineKernel({ name: "mix", wgsl: MIX_WGSL });
const copy = defineKernel({ name: "copy", wgsl: COPY_WGSL });

/** Submits the client's work at once (a flush does so before it returns), then blocks until the device is idle. */
const flushAndSettle = () => {
  client.flush().catch((e) => {
    console.error(e);
    Deno.exit(1);
  });
  blockUntilIdle(device);
};

const layout = storageLayout(device, 2);
const pipelines = rawPipelines(device, layout, [MIX_WGSL, COPY_WGSL]);

const LENGTHS = (Deno.env.get("LENGTHS") ?? "1,10,100,1000").split(",").map(Number);
const SIZES = (Deno.env.get("WORKGROUPS") ?? "1,256").split(",").map(Number)
  .map((groups) => ({ name: groups === 1 ? "1 workgroup" : `${groups} workgroups`, groups }));
const TARGET = 1024;
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 1);
const N = Number(Deno.env.get("N") ?? 100);
const FLOOR = "raw WebGPU floor";
const WARMUP = Number(Deno.env.get("WARMUP") ?? 300);

/** What an iteration times with: the bench's context, or nothing during the warm-up. */
type Timer = Pick<Deno.BenchContext, "start" | "end">;
const UNTIMED: Timer = { start() {}, end() {} };
/** A bench function that first runs `WARMUP` untimed iterations, once. */
const warmedUp = (iteration: (t: Timer) => void) => {
  let cold = true;
  return (t: Deno.BenchContext) => {
    if (cold) {
      for (let i = 0; i < WARMUP; i++) iteration(UNTIMED);
      cold = false;
    }
    iteration(t);
  };
};

for (const size of SIZES) {
  const n = size.groups * 64;
  const a = client.create(new Float32Array(n).fill(1));
  const b = client.create(new Float32Array(n).fill(2));
  const rawA = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE });
  const rawB = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE });
  const rawBg = bindBuffers(device, layout, [rawA, rawB]);
  const poolBg = bindBuffers(
    device,
    layout,
    [a, b].map((h) => client.getResource(h)),
    "bench raw bind group on the runtime's buffers",
  );
  const count = [size.groups];
  const ab = [a, b];
  for (const length of LENGTHS) {
    const reps = Math.ceil(TARGET / length);
    const sequence = () => {
      for (let i = 0; i < length; i++) client.launch(i % 2 === 0 ? mix : copy, count, ab);
    };
    const graph = await client.capture(sequence);
    await client.sync();
    const group = `L=${length}, ${size.name} (${reps * length} dispatches per iteration)`;

    /** One raw iteration: the floor's loop, with the variants' switches. */
    const rawLoop = (
      t: Timer,
      variant: { skipRepeatedBinds?: boolean; openInTimedRegion?: boolean; bindGroup?: GPUBindGroup } = {},
    ) => {
      const { skipRepeatedBinds = false, openInTimedRegion = false, bindGroup = rawBg } = variant;
      if (openInTimedRegion) t.start();
      const encoder = device.createCommandEncoder({ label: "bench raw encoder" });
      const pass = encoder.beginComputePass({ label: "bench raw pass" });
      const options = { pipelines, bindGroup, reps, length, groups: size.groups, skipRepeatedBinds };
      if (!openInTimedRegion) t.start();
      encodeAlternating(pass, options);
      t.end();
      pass.end();
      device.queue.submit([encoder.finish()]);
      blockUntilIdle(device);
    };
    /** The group's cases, in their natural order; the floor is the baseline. */
    const cases: { name: string; fn: (t: Deno.BenchContext) => void }[] = [
      { name: FLOOR, fn: warmedUp((t) => rawLoop(t)) },
      // The same floor with the one saving the runtime makes: a bind group already
      // bound under the same pipeline is not set again (only L = 1 repeats one).
      { name: "raw, repeated binds skipped", fn: warmedUp((t) => rawLoop(t, { skipRepeatedBinds: true })) },
      // The floor with its per-submission setup (encoder and pass) timed too, as
      // the runtime's is; see the header.
      {
        name: "raw, encoder opened in the timed region",
        fn: warmedUp((t) => rawLoop(t, { openInTimedRegion: true })),
      },
      // The floor on the runtime's own memory: both bindings are slices of one
      // pool page, as the graph's are; see the header.
      { name: "raw, on the runtime's buffers", fn: warmedUp((t) => rawLoop(t, { bindGroup: poolBg })) },
      {
        name: "graph.replay()",
        fn: warmedUp((t) => {
          t.start();
          for (let r = 0; r < reps; r++) graph.replay();
          t.end();
          flushAndSettle();
        }),
      },
      {
        name: "client.launch",
        fn: warmedUp((t) => {
          t.start();
          for (let r = 0; r < reps; r++) sequence();
          t.end();
          flushAndSettle();
        }),
      },
    ];
    const register = (c: (typeof cases)[number], round: number) =>
      Deno.bench({
        group: ROUNDS === 1 ? group : `${group}, round ${round + 1} of ${ROUNDS}`,
        name: c.name,
        baseline: c.name === FLOOR,
        n: N,
        // In rounds, two untimed calls per case and round take the switch from the case
        // before; the case's real warm-up ran at its first call.
        ...(ROUNDS > 1 ? { warmup: 2 } : {}),
        fn: c.fn,
      });
    // The first round in the natural order (the floor first); every later one in
    // a fresh shuffled order, so that each case follows every other about equally often.
    for (const c of cases) register(c, 0);
    const byName = new Map(cases.map((c) => [c.name, c]));
    interleave([...byName.keys()], ROUNDS - 1, (name, round) => register(byName.get(name)!, round + 1));
  }
}

globalThis.addEventListener("unload", () => client.destroy());

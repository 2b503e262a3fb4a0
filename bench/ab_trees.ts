/**
 * Two builds of the runtime in one process: this tree against another copy
 * (for example the last commit before a refactor), each with its own client,
 * timed interleaved on the same sequences as `graph_bench.ts`, next to the
 * raw floor. A diagnostic script for changes too small for separate
 * processes: on the H200 host the floor moves by ±5–8% from one process to
 * the next, while in one process the two builds share the host's state.
 *
 * Each iteration encodes about 1,024 dispatches (⌈1024 / L⌉ repetitions of L
 * launches alternating two kernels, or as many `graph.replay()` calls of the
 * captured sequence), times only the encoding (wall clock), then submits and
 * blocks until the device is idle (`blockUntilIdle`). Every case runs
 * `WARMUP` untimed iterations, then `ROUNDS` rounds of `BLOCK` iterations,
 * each round in a fresh shuffled order (`interleave`).
 *
 * Besides the ratios of means and medians it prints the per-round paired
 * ratio and the ratio of minimums (`pairedRatio` in `_raw.ts`): on an H100
 * the control (this tree against a copy of itself) read 0.59 by medians.
 *
 * Prepare the other tree, then run:
 * ```
 * mkdir -p .device/old && git archive <rev> mod.ts src | tar -x -C .device/old
 * OLD=.device/old deno run --allow-env --allow-read bench/ab_trees.ts
 * ```
 * (env `L`, default 10; `ROUNDS`, default 30; `BLOCK`, default 20; `WARMUP`,
 * default 300). On the H200: the `device` tool with carry `[".device"]`. In
 * `bench/RESULTS.md` (run 23) it found a 4–6% launch cost that alternating
 * processes had put inside their noise.
 */

import * as NEW from "../mod.ts";
import {
  bindBuffers,
  blockUntilIdle,
  COPY_WGSL,
  encodeAlternating,
  formatPaired,
  importTree,
  interleave,
  mean,
  median,
  MIX_WGSL,
  pairedRatio,
  rawPipelines,
  storageLayout,
} from "./_raw.ts";

type Runtime = typeof NEW;
const oldPath = Deno.env.get("OLD");
if (!oldPath) {
  console.error("ab_trees: set OLD to the other tree's root (a folder holding its mod.ts)");
  Deno.exit(2);
}
const OLD = await importTree(oldPath);

const L = Number(Deno.env.get("L") ?? 10);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 30);
const BLOCK = Number(Deno.env.get("BLOCK") ?? 20);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 300);
const reps = Math.ceil(1024 / L);
const dispatches = reps * L;
const MIX = MIX_WGSL;
const COPY = COPY_WGSL;

type Client = Awaited<ReturnType<Runtime["createClient"]>>;
type Kernel = ReturnType<Runtime["defineKernel"]>;
type Graph = Awaited<ReturnType<Client["capture"]>>;
/** A tree's launch sequence (L launches alternating two kernels), its timed launch loop and its replay loop. */
interface Loops {
  sequence(client: Client, mix: Kernel, copy: Kernel, one: number[], ab: ReturnType<Client["create"]>[]): void;
  launches(client: Client, mix: Kernel, copy: Kernel, one: number[], ab: ReturnType<Client["create"]>[]): void;
  replays(graph: Graph): void;
}
/**
 * Each tree's loops are written out at a place of their own. Closures made
 * from one function literal share V8's type feedback: one loop for both trees
 * made its `client.launch` call site polymorphic, and V8 then split its
 * inlining budget between the two trees' launch paths, which is the very
 * thing an A/B of launch cost compares.
 */
const LOOPS: readonly [Loops, Loops] = [
  {
    sequence(client, mix, copy, one, ab) {
      for (let i = 0; i < L; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
    },
    launches(client, mix, copy, one, ab) {
      for (let r = 0; r < reps; r++) this.sequence(client, mix, copy, one, ab);
    },
    replays(graph) {
      for (let r = 0; r < reps; r++) graph.replay();
    },
  },
  {
    sequence(client, mix, copy, one, ab) {
      for (let i = 0; i < L; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
    },
    launches(client, mix, copy, one, ab) {
      for (let r = 0; r < reps; r++) this.sequence(client, mix, copy, one, ab);
    },
    replays(graph) {
      for (let r = 0; r < reps; r++) graph.replay();
    },
  },
];

/** One build's cases: its launch loop and its replay loop, in ms per iteration. */
async function cases(runtime: Runtime, name: string, loops: Loops) {
  const client = await runtime.createClient({ tasksMax: 4096 });
  const mix = runtime.defineKernel({ name: "mix", wgsl: MIX });
  const copy = runtime.defineKernel({ name: "copy", wgsl: COPY });
  const ab = [client.create(new Float32Array(64).fill(1)), client.create(new Float32Array(64).fill(2))];
  const one = [1];
  const graph = await client.capture(() => loops.sequence(client, mix, copy, one, ab));
  await client.sync();
  const device = client.server.device;
  const settle = () => {
    client.flush().catch((e) => {
      console.error(e);
      Deno.exit(1);
    });
    blockUntilIdle(device);
  };
  const timed = (encode: () => void) => () => {
    const t0 = performance.now();
    encode();
    const ms = performance.now() - t0;
    settle();
    return ms;
  };
  return {
    [`client.launch, ${name}`]: timed(() => loops.launches(client, mix, copy, one, ab)),
    [`graph.replay(), ${name}`]: timed(() => loops.replays(graph)),
    device,
  };
}

const { device: newDevice, ...newCases } = await cases(NEW, "this tree", LOOPS[0]);
const { device: _oldDevice, ...oldCases } = await cases(OLD, "other tree", LOOPS[1]);
const layout = storageLayout(newDevice, 2);
const pipelines = rawPipelines(newDevice, layout, [MIX, COPY]);
const rawBuffers = [0, 1].map((i) =>
  newDevice.createBuffer({ label: `ab_trees raw buffer ${i}`, size: 256, usage: GPUBufferUsage.STORAGE })
);
const rawBg = bindBuffers(newDevice, layout, rawBuffers, "ab_trees raw bind group");
const FLOOR = "raw WebGPU floor";
const all: Record<string, () => number> = {
  [FLOOR]: () => {
    const encoder = newDevice.createCommandEncoder({ label: "ab_trees raw encoder" });
    const pass = encoder.beginComputePass({ label: "ab_trees raw pass" });
    const t0 = performance.now();
    encodeAlternating(pass, { pipelines, bindGroup: rawBg, reps, length: L, groups: 1, skipRepeatedBinds: false });
    const ms = performance.now() - t0;
    pass.end();
    newDevice.queue.submit([encoder.finish()]);
    blockUntilIdle(newDevice);
    return ms;
  },
  ...newCases,
  ...oldCases,
};
const names = Object.keys(all);
const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const rounds: Record<string, number[][]> = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) for (let i = 0; i < WARMUP; i++) all[name]!();
interleave(names, ROUNDS, (name) => {
  const block: number[] = [];
  for (let i = 0; i < BLOCK; i++) block.push(all[name]!());
  times[name]!.push(...block);
  rounds[name]!.push(block);
});
const perDispatch = (ms: number) => (ms * 1e6 / dispatches).toFixed(0).padStart(6);
console.log(`L=${L}, ${dispatches} dispatches per iteration; ns per dispatch, mean and median; ÷ floor (mean)`);
for (const name of names) {
  const xs = times[name]!;
  console.log(
    `${name.padEnd(30)} ${perDispatch(mean(xs))} ${perDispatch(median(xs))}  ${
      (mean(xs) / mean(times[FLOOR]!)).toFixed(2)
    }`,
  );
}
for (const kind of ["client.launch", "graph.replay()"]) {
  const a = times[`${kind}, this tree`]!;
  const b = times[`${kind}, other tree`]!;
  console.log(
    `${kind}: this tree ÷ other tree ${(mean(a) / mean(b)).toFixed(3)} (mean), ${
      (median(a) / median(b)).toFixed(3)
    } (median); ${formatPaired(pairedRatio(rounds[`${kind}, this tree`]!, rounds[`${kind}, other tree`]!))}`,
  );
}
Deno.exit(0);

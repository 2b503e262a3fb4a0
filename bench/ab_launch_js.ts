/**
 * The launch path's own JavaScript, tree against tree: the pass's
 * `setPipeline`, `setBindGroup` and `dispatchWorkgroups` are replaced by empty
 * functions while timing, so what is measured is what the runtime adds on
 * the host, without the FFI calls and the driver whose timing moves by
 * ±5–8% between processes on the GPU host (and more on llvmpipe, whose
 * threads run the work beside the encoding). A diagnostic script for launch
 * cost changes of a few nanoseconds: `ab_trees.ts` on the GPU says what
 * they weigh next to the rest of a launch.
 *
 * Each sample is 1,030 launches alternating two kernels over two handles (as
 * `ab_trees.ts` at L = 10), then a flush. Every tree runs `WARMUP` untimed
 * samples; then `ROUNDS` rounds, each tree once per round in a shuffled order
 * (`interleave`), each taking the fastest of `BEST` samples. The raw row is
 * the same loop on raw WebGPU with the same empty functions: the harness's
 * own floor.
 *
 * ```
 * mkdir -p .device/base && git archive 48a0001 mod.ts src | tar -x -C .device/base
 * TREES=.device/base deno run --allow-env --allow-read bench/ab_launch_js.ts
 * ```
 * (`TREES`: other trees, comma-separated, each a folder holding a `mod.ts`;
 * this tree is always measured and the first one listed is the reference.
 * env `ROUNDS`, default 40; `BEST`, default 20; `WARMUP`, default 200.)
 */

import {
  alternatingLaunches,
  bindBuffers,
  COPY_WGSL,
  formatPaired,
  importTree,
  interleave,
  median,
  MIX_WGSL,
  pairedRatio,
  rawPipelines,
  storageLayout,
} from "./_raw.ts";

const others = (Deno.env.get("TREES") ?? "").split(",").filter((t) => t !== "");
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 40);
const BEST = Number(Deno.env.get("BEST") ?? 20);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 200);
const LAUNCHES = 1030;

type Sample = () => number;
const samplers = new Map<string, Sample>();

// The raw loop: the same sequence of pass calls, made directly.
{
  const adapter = (await navigator.gpu.requestAdapter())!;
  const device = await adapter.requestDevice({ label: "ab_launch_js raw device" });
  const layout = storageLayout(device, 2, { label: "ab_launch_js raw layout" });
  const [mix, copy] = rawPipelines(device, layout, [MIX_WGSL, COPY_WGSL], "ab_launch_js raw pipeline");
  const usage = GPUBufferUsage.STORAGE;
  const a = device.createBuffer({ label: "ab_launch_js raw a", size: 256, usage });
  const b = device.createBuffer({ label: "ab_launch_js raw b", size: 256, usage });
  const group = bindBuffers(device, layout, [a, b], "ab_launch_js raw bind group");
  samplers.set("raw WebGPU", () => {
    const encoder = device.createCommandEncoder({ label: "ab_launch_js raw encoder" });
    const pass = encoder.beginComputePass({ label: "ab_launch_js raw pass" });
    const t0 = performance.now();
    for (let r = 0; r < LAUNCHES / 10; r++) {
      for (let i = 0; i < 10; i++) {
        pass.setPipeline(i % 2 === 0 ? mix : copy);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(1);
      }
    }
    const dt = performance.now() - t0;
    pass.end();
    device.queue.submit([encoder.finish({ label: "ab_launch_js raw commands" })]);
    return dt;
  });
}

for (const [name, tree] of [["this tree", "."], ...others.map((t) => [t, t])] as const) {
  const { client, mix, copy, ab, one } = await alternatingLaunches(await importTree(tree));
  samplers.set(name, () => {
    const t0 = performance.now();
    for (let r = 0; r < LAUNCHES / 10; r++) {
      for (let i = 0; i < 10; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
    }
    const dt = performance.now() - t0;
    client.flush().catch((e) => {
      console.error(e);
      Deno.exit(1);
    });
    return dt;
  });
}

// From here on the pass's calls do nothing (the passes are still begun, ended and submitted).
const pass = GPUComputePassEncoder.prototype as unknown as Record<string, unknown>;
const real = {
  setPipeline: pass.setPipeline,
  setBindGroup: pass.setBindGroup,
  dispatchWorkgroups: pass.dispatchWorkgroups,
};
pass.setPipeline = function () {};
pass.setBindGroup = function () {};
pass.dispatchWorkgroups = function () {};
const names = [...samplers.keys()];
for (let w = 0; w < WARMUP; w++) for (const name of names) samplers.get(name)!();
const rounds = new Map<string, number[][]>(names.map((n) => [n, []]));
interleave(names, ROUNDS, (name) => {
  const sample = samplers.get(name)!;
  let best = Infinity;
  for (let j = 0; j < BEST; j++) best = Math.min(best, sample());
  rounds.get(name)!.push([best * 1e6 / LAUNCHES]);
});
Object.assign(pass, real);

console.log(
  `ns per launch, fastest of ${BEST} samples of ${LAUNCHES} launches, median and lower quartile over ${ROUNDS} rounds`,
);
const reference = names[2] ?? names[1]!;
for (const name of names) {
  const v = rounds.get(name)!.map((r) => r[0]!).sort((x, y) => x - y);
  console.log(`${name.padEnd(24)} ${median(v).toFixed(1).padStart(7)} ${v[v.length >> 2]!.toFixed(1).padStart(7)}`);
}
for (const name of names.slice(1)) {
  if (name === reference) continue;
  console.log(`${name} ÷ ${reference}: ${formatPaired(pairedRatio(rounds.get(name)!, rounds.get(reference)!))}`);
}
Deno.exit(0);

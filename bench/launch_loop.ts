/**
 * A bare launch loop, for looking at the launch path with V8's own tools
 * rather than a stopwatch: 1,030 launches alternating two kernels per
 * iteration (as `ab_trees.ts` at L = 10), each iteration flushed and waited
 * for, then the median and lower quartile of the encoding time per launch.
 * `T` picks the tree (a folder holding a `mod.ts`; default this one),
 * `ITER` the iterations (default 600; the first third are not timed).
 *
 * ```
 * # Is LaunchPath.launch inlined into the client's launch? A `launch` target of at most 460 bytes of bytecode
 * # is; one past that shows as "exceeds bytecode limit"
 * deno run --allow-env --allow-read --v8-flags=--trace-turbo-inlining bench/launch_loop.ts | grep -E "target: .*launch>|bytecode limit"
 * # Where the JavaScript time goes, per function
 * deno run --allow-env --allow-read --cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=prof bench/launch_loop.ts
 * ```
 */

import { alternatingLaunches, blockUntilIdle, importTree, median } from "./_raw.ts";

const tree = Deno.env.get("T");
const R: typeof import("../mod.ts") = tree === undefined ? await import("../mod.ts") : await importTree(tree);
const ITER = Number(Deno.env.get("ITER") ?? 600);

const { client, mix, copy, ab, one } = await alternatingLaunches(R);
const device = client.server.device;
const times: number[] = [];
for (let it = 0; it < ITER; it++) {
  const t0 = performance.now();
  for (let r = 0; r < 103; r++) for (let i = 0; i < 10; i++) client.launch(i % 2 === 0 ? mix : copy, one, ab);
  if (it >= ITER / 3) times.push(performance.now() - t0);
  client.flush().catch((e) => {
    console.error(e);
    Deno.exit(1);
  });
  blockUntilIdle(device);
}
times.sort((a, b) => a - b);
const ns = (ms: number) => (ms * 1e6 / 1030).toFixed(1);
console.log(
  `${tree ?? "this tree"}: ${ns(median(times))} ns per launch (median), ${ns(times[times.length >> 2]!)} (p25)`,
);
Deno.exit(0);

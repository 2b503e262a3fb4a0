/**
 * Launches by binding name against positional ones, interleaved in one
 * process: the target is the named form within 10% of the positional
 * one on the H200. `launch_bench.ts` has both in its groups, but groups run
 * one after another, and on a shared host their order moves a figure by more
 * than 10%; here each round runs every case once, in alternating order, and
 * the ratio is of medians (and of means) over the rounds.
 *
 * Cases: the tiny kernel of `launch_bench.ts` (one buffer, no info words) and
 * its four buffers with info words changing every launch, each 1,024
 * launches per round, positional (`[x]`, an array reused) and by name
 * (`{ x }`, an object reused), timing the loop only; a flush follows, untimed.
 *
 * Run: `deno run --allow-env --allow-read bench/named_launch_ab.ts` (env
 * `ROUNDS`, default 400; `WARMUP` rounds left out, default 50). On the
 * software adapter, `LP_NUM_THREADS=0` (see `launch_bench.ts`).
 */

import { createClient, defineKernel } from "../mod.ts";
import { FOUR_BUFFERS_INFO_WGSL, mean, median, TINY_WGSL } from "./_raw.ts";

const L = 1024;
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 400);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 50);
const client = await createClient({ tasksMax: L * 4 });
const tiny = defineKernel({ name: "tiny", wgsl: TINY_WGSL });
const four = defineKernel({ name: "four-buffers-info", wgsl: FOUR_BUFFERS_INFO_WGSL });
const x = client.create(new Uint32Array(64));
const bufs = [0, 1, 2, 3].map(() => client.create(new Uint32Array(64)));
const infos = Array.from({ length: L }, (_, i) => new Uint32Array([i, i * 3, 7, i ^ 5]));
const one = [1];
const xs = [x];
const xNamed = { x };
const bufsNamed = { a: bufs[0]!, b: bufs[1]!, c: bufs[2]!, d: bufs[3]! };

const cases: Record<string, () => void> = {
  "tiny, positional": () => {
    for (let i = 0; i < L; i++) client.launch(tiny, one, xs);
  },
  "tiny, by name": () => {
    for (let i = 0; i < L; i++) client.launch(tiny, one, xNamed);
  },
  "4 buffers + info, positional": () => {
    for (let i = 0; i < L; i++) client.launch(four, one, bufs, infos[i]);
  },
  "4 buffers + info, by name": () => {
    for (let i = 0; i < L; i++) client.launch(four, one, bufsNamed, infos[i]);
  },
};
const names = Object.keys(cases);
const times = new Map(names.map((k) => [k, [] as number[]]));
for (let r = 0; r < WARMUP + ROUNDS; r++) {
  for (const k of r % 2 === 0 ? names : [...names].reverse()) {
    const t = performance.now();
    cases[k]!();
    const ns = (performance.now() - t) * 1e6 / L;
    await client.flush();
    if (r >= WARMUP) times.get(k)!.push(ns);
  }
}

console.log(`${ROUNDS} rounds of ${L} launches; ns per launch, median and mean`);
for (const k of names) {
  const t = times.get(k)!;
  console.log(`${k.padEnd(30)} ${median(t).toFixed(0).padStart(6)} ${mean(t).toFixed(0).padStart(6)}`);
}
for (const group of ["tiny", "4 buffers + info"]) {
  const pos = times.get(`${group}, positional`)!;
  const named = times.get(`${group}, by name`)!;
  console.log(
    `${group}: by name ÷ positional ${(median(named) / median(pos)).toFixed(3)} (median), ${
      (mean(named) / mean(pos)).toFixed(3)
    } (mean)`,
  );
}
client.destroy();

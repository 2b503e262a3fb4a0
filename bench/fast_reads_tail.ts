/**
 * The fast-read tail (issue 33): `ROUNDS` rounds (default 1,000) of one
 * launch and one small read, as a training loop reads its loss every step,
 * with `fastReads: true`, after 10 untimed rounds (the kernel compiles on its
 * first launch). Prints the latency distribution of a round (p50,
 * p90, p99, max, rounds over 1 ms and over 2 ms), the staging buffers the
 * stream created, the most leftover maps pending at once, whether staging
 * buffers are reused before their leftovers settle (the self-test decides),
 * and that every byte read was right. A round that finds no staging buffer
 * ready to map early takes the spec path (~11 ms).
 *
 * Run: `deno run --allow-env bench/fast_reads_tail.ts` (env: ROUNDS, JSON=1 for one JSON line).
 */

import { createClient, defineKernel } from "../mod.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 1000);
const inc = defineKernel({
  name: "inc",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < arrayLength(&x)) { x[g.x] += 1u; } }`,
});

await using client = await createClient({ fastReads: true });
if (!client.fastReads) throw new Error(`fast reads are off: ${client.server.fastReadsReason}`);
const x = client.create(new Uint32Array(64));
const WARMUP = 10; // the kernel's first launch compiles it: not a read's cost
for (let i = 0; i < WARMUP; i++) {
  client.launch(inc, [1], [x]);
  await client.read(x);
}
const staging = client.server.stream(0).staging;
const ms: number[] = [];
let wrong = 0;
let peakLeftovers = 0;
for (let i = 1; i <= ROUNDS; i++) {
  const t0 = performance.now();
  client.launch(inc, [1], [x]);
  const got = await client.read(x, Uint32Array);
  ms.push(performance.now() - t0);
  if (got[0] !== WARMUP + i || got[63] !== WARMUP + i) wrong++;
  peakLeftovers = Math.max(peakLeftovers, staging.leftovers);
}
const sorted = [...ms].sort((a, b) => a - b);
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const result = {
  rounds: ROUNDS,
  p50: q(0.5),
  p90: q(0.9),
  p99: q(0.99),
  max: sorted.at(-1)!,
  over1ms: ms.filter((v) => v > 1).length,
  over2ms: ms.filter((v) => v > 2).length,
  stagingCreated: staging.created,
  specFallbacks: staging.fallbacks,
  peakLeftovers,
  reuse: staging.reuseCooling,
  slowRounds: ms.map((v, i) => [i, v] as const).filter(([, v]) => v > 2).map(([i, v]) => `#${i}:${v.toFixed(1)}`).join(
    " ",
  ),
  wrong,
  adapter: client.properties.identity.description,
};
if (Deno.env.get("JSON") === "1") console.log(JSON.stringify(result));
else {
  const f = (v: number) => v.toFixed(3);
  console.log(
    `${result.adapter}: ${ROUNDS} launch + read rounds with fast reads: p50 ${f(result.p50)} ms, p90 ${
      f(result.p90)
    }, p99 ${f(result.p99)}, max ${
      f(result.max)
    }; ${result.over1ms} over 1 ms, ${result.over2ms} over 2 ms; ${result.stagingCreated} staging buffers created (reuse ${result.reuse}), ${result.specFallbacks} reads on the spec path, at most ${result.peakLeftovers} leftover maps pending; ${wrong} wrong; over 2 ms: ${result.slowRounds}`,
  );
}

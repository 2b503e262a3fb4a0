/**
 * Start/destroy cycles of a worker client with work in flight, in one
 * process: each cycle starts a client, queues launches and a read, destroys
 * the client without waiting (half the cycles after a flush), and waits for
 * its Worker to end. Prints the resident set and heap after the first tenth
 * of the cycles and at the end, so a leak shows as growth between them;
 * checks that every read in flight was rejected with `DeviceLostError` or
 * resolved with the right bytes. `worker_cycles.sh` runs it in many
 * processes and counts the ones that did not exit cleanly (native crashes).
 *
 * Run: `CYCLES=200 deno run --allow-env --allow-read --v8-flags=--expose-gc bench/worker_cycles.ts`
 * (`EVERY=50` also prints the resident set every 50 cycles)
 * (the flag lets it collect garbage before each memory figure).
 */

import { createClient, defineKernel, DeviceLostError } from "../mod.ts";
import { formatBytes } from "../src/_util/format.ts";

const CYCLES = Number(Deno.env.get("CYCLES") ?? 200);
/** Print the resident set every `EVERY` cycles (0: only after a tenth and at the end), to tell a plateau from a leak. */
const EVERY = Number(Deno.env.get("EVERY") ?? 0);
const curve: string[] = [];
const inc = defineKernel({
  name: "inc",
  wgsl: `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] + 1u; }
}`,
});

/** Memory after a full collection when `--v8-flags=--expose-gc` is given. */
function memory(): { rss: number; heap: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = Deno.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}
const outcomes = { lost: 0, read: 0 };
let early = { rss: 0, heap: 0 };
const t0 = performance.now();
for (let i = 0; i < CYCLES; i++) {
  const client = await createClient({ worker: true });
  const x = client.create(new Uint32Array(4096));
  for (let k = 0; k < 100; k++) client.launch(inc, [64], [x]);
  const read = client.read(x, Uint32Array).then(
    (v) => {
      if (!v.every((e) => e === 100)) throw new Error(`cycle ${i}: wrong bytes ${v[0]}`);
      return "read" as const;
    },
    (e) => {
      if (e instanceof DeviceLostError) return "lost" as const;
      throw e;
    },
  );
  if (i % 2 === 1) await client.flush();
  client.destroy();
  outcomes[await read]++;
  await client.ended;
  if (i + 1 === Math.ceil(CYCLES / 10)) early = memory();
  if (EVERY > 0 && (i + 1) % EVERY === 0) curve.push(`${i + 1}: ${formatBytes(memory().rss)}`);
}
if (curve.length > 0) console.log(`rss by cycle: ${curve.join(", ")}`);
const m = memory();
console.log(
  `${CYCLES} cycles in ${
    ((performance.now() - t0) / 1000).toFixed(1)
  } s: reads ${outcomes.read} done, ${outcomes.lost} lost; ` +
    `rss ${formatBytes(early.rss)} after ${Math.ceil(CYCLES / 10)} cycles, ${formatBytes(m.rss)} at the end; ` +
    `heap ${formatBytes(early.heap)} → ${formatBytes(m.heap)}`,
);

/**
 * The worker client's launch rates, interleaved rep by rep with the
 * main-thread client in one process, reported as medians (and p10): the
 * main thread's cost per launch through each client, and the worker's
 * encoding cost per launch measured inside the worker (its busy time over
 * the records it ran, from the `stats` call), which is what "launches
 * encoded per second in the worker" compares with the main-thread client's
 * encoding loop. The wall time until the worker has read every record is
 * shown too: it adds the worker's wake-up and whatever else the cores run.
 *
 * Both clients batch every launch of a rep into one submit (`tasksMax` above
 * the rep), as `launch_bench.ts` does, so only host encoding is timed.
 *
 * Run: `deno run --allow-env --allow-read bench/worker_encode.ts`
 * (`N` launches per rep, default 8,192, which fit the ring even with info words; `REPS`, default 30; `INFO=1` for
 * four buffers and changing info words instead of one buffer).
 */

import { createClient, defineKernel } from "../mod.ts";
import { FOUR_BUFFERS_INFO_WGSL, TINY_WGSL } from "./_raw.ts";

const N = Number(Deno.env.get("N") ?? 8192); // fits the ring (16,384 slots) with info words too: no spill
const REPS = Number(Deno.env.get("REPS") ?? 30);
const INFO = Deno.env.get("INFO") === "1";
const main = await createClient({ tasksMax: N * 4 });
const worker = await createClient({ worker: true, tasksMax: N * 4 });
const kernel = INFO
  ? defineKernel({ name: "four-buffers-info", wgsl: FOUR_BUFFERS_INFO_WGSL })
  : defineKernel({ name: "tiny", wgsl: TINY_WGSL });
const count = INFO ? 4 : 1;
const mb = Array.from({ length: count }, () => main.create(new Uint32Array(64)));
const wb = Array.from({ length: count }, () => worker.create(new Uint32Array(64)));
const infos = Array.from({ length: N }, (_, i) => new Uint32Array([i, i * 3, 7, i ^ 5]));
const one = [1];
const stats = async () => (await worker.connection.call({ method: "stats" }) as { busyMs: number; records: number });
const ring = worker.connection.ring;

function loop(client: typeof main | typeof worker, buffers: typeof mb): number {
  const t0 = performance.now();
  if (INFO) { for (let i = 0; i < N; i++) client.launch(kernel, one, buffers, infos[i]); }
  else for (let i = 0; i < N; i++) client.launch(kernel, one, buffers);
  return performance.now() - t0;
}

const rows = { main: [] as number[], write: [] as number[], busy: [] as number[], wall: [] as number[] };
for (let rep = 0; rep < REPS + 3; rep++) {
  const order = Math.random() < 0.5;
  for (const side of order ? ["main", "worker"] : ["worker", "main"]) {
    if (side === "main") {
      const ms = loop(main, mb);
      await main.flush();
      if (rep >= 3) rows.main.push(ms);
    } else {
      while (ring.backlog() > 0) await new Promise((r) => setTimeout(r, 1));
      const before = await stats();
      const t0 = performance.now();
      const ms = loop(worker, wb);
      while (ring.backlog() > 0) {
        if (ring.spilled > 0) await new Promise((r) => setTimeout(r, 0)); // the worker's `space` message
      }
      const wall = performance.now() - t0;
      const after = await stats();
      await worker.flush();
      if (rep >= 3) {
        rows.write.push(ms);
        rows.wall.push(wall);
        rows.busy.push((after.busyMs - before.busyMs) * N / Math.max(1, after.records - before.records - 1));
      }
    }
  }
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!;
const us = (ms: number) => (ms * 1000 / N).toFixed(3);
const line = (name: string, xs: number[]) =>
  console.log(`${name.padEnd(52)} ${us(q(xs, 0.5))} µs (p10 ${us(q(xs, 0.1))})`);
console.log(
  `${main.properties.identity.description}; ${N} launches per rep, ${REPS} reps, ${
    INFO ? "4 buffers + info" : "1 buffer"
  }`,
);
line("ComputeClient: main-thread cost = encoding", rows.main);
line("WorkerClient: main-thread cost (ring records)", rows.write);
line("WorkerClient: worker's encoding (busy time / records)", rows.busy);
line("WorkerClient: wall until the worker read every record", rows.wall);
console.log(
  `host cost, worker/main: ${(q(rows.write, 0.5) / q(rows.main, 0.5)).toFixed(2)}; encode rate, worker/main: ${
    (q(rows.main, 0.5) / q(rows.busy, 0.5)).toFixed(2)
  }`,
);
main.destroy();
worker.destroy();
await worker.ended;

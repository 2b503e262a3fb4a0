/**
 * The full fast-reads soak of issue 19: 100,000 reads of random sizes after
 * writes and launches on three streams with fast reads on, every byte checked
 * against a CPU model, with the staging buffers and the heap after warm-up.
 * `tests/soak/fast_reads_soak_test.ts` runs the same soak with 4,000 reads.
 *
 * Run: `deno run --allow-env --v8-flags=--expose-gc bench/fast_reads_soak.ts`
 * (env `READS`, default 100000).
 */

import { createClient } from "../mod.ts";
import { runFastReadSoak } from "../tests/soak/_fast_reads_soak.ts";
import { formatBytes } from "../src/_util/format.ts";

const READS = Number(Deno.env.get("READS") ?? 100_000);
await using client = await createClient({ fastReads: true });
console.log(`fast reads ${client.fastReads ? "on" : `off (${client.server.fastReadsReason})`}`);
const soak = await runFastReadSoak(client, READS);
console.log(
  `${soak.reads} reads on ${client.properties.identity.description} in ${(soak.ms / 1000).toFixed(1)} s ` +
    `(${(soak.ms / soak.reads * 1000).toFixed(0)} µs per step with its write or launch), ${soak.wrong} wrong; ` +
    `staging buffers created ${soak.stagingCreated.warm} by warm-up (10%), ${soak.stagingCreated.end} at the end, ` +
    `idle at most ${formatBytes(soak.stagingHeldMax)} after warm-up; heap ${formatBytes(soak.heap.warm)} → ${
      formatBytes(soak.heap.end)
    }${(globalThis as { gc?: unknown }).gc ? " (after gc())" : ""}, ` +
    `${client.server.bindGroupsCreated} bind groups created (the cache keeps up to 16,384)`,
);
if (soak.wrong > 0) Deno.exit(1);

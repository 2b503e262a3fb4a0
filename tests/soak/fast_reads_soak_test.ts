/**
 * Fast-reads soak (issue 19, reliability): reads of random sizes after writes
 * and launches on three streams with fast reads on, every byte checked
 * against a CPU model; after a warm-up the staging buffers and the JS heap
 * stay flat. 4,000 reads here (`FAST_READS_SOAK_READS`, with `--allow-env`,
 * sets another count); `bench/fast_reads_soak.ts` runs the full 100,000.
 */

import assert from "node:assert/strict";
import { withClient } from "../_gpu.ts";
import { runFastReadSoak } from "./_fast_reads_soak.ts";
import { formatBytes } from "../../src/_util/format.ts";

const MiB = 1024 * 1024;

function envInt(name: string, fallback: number): number {
  try {
    const v = Deno.env.get(name);
    return v === undefined ? fallback : Number.parseInt(v, 10);
  } catch {
    return fallback; // no --allow-env
  }
}

Deno.test({
  name: "fast-reads soak: reads of random sizes stay exact, and staging buffers and heap stay flat after warm-up",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await withClient(async (client) => {
      const reads = envInt("FAST_READS_SOAK_READS", 4000);
      const soak = await runFastReadSoak(client, reads, reads / 4);
      console.log(
        `fast-reads soak (fast reads ${client.fastReads ? "on" : "off"}): ${soak.reads} reads in ${
          (soak.ms / 1000).toFixed(1)
        } s, ${soak.wrong} wrong; staging buffers created ${soak.stagingCreated.warm} by warm-up, ${soak.stagingCreated.end} at the end, idle at most ${
          formatBytes(soak.stagingHeldMax)
        }; heap ${formatBytes(soak.heap.warm)} → ${formatBytes(soak.heap.end)}`,
      );
      assert.equal(soak.wrong, 0);
      // Bounded: every class keeps at most 16 MiB of idle buffers, and a read borrows from the classes above.
      assert.ok(soak.stagingHeldMax <= 48 * MiB, `idle staging ${soak.stagingHeldMax} B`);
      const gc = (globalThis as { gc?: () => void }).gc;
      assert.ok(soak.heap.end - soak.heap.warm <= (gc ? 8 : 64) * MiB, `heap ${soak.heap.warm} → ${soak.heap.end} B`);
    }, { fastReads: true });
  },
});

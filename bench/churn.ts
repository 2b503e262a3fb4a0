/**
 * Memory churn: how much device memory a pool layout reserves for a workload
 * of mixed sizes, as `reserved ÷ peak live` at the end (issue 18.3) and as the
 * reservation's own high-water mark ÷ peak live. The pattern
 * (`tests/memory/_churn.ts`): 10,000 operations, about 45% releases of a
 * random live handle and 55% allocations (80% of 256 B–64 KiB, 20% of
 * 64 KiB–1 MiB), at most 300 live. Several seeds, each in a fresh client, for
 * each layout: the default (`compact`, pages of fixed sizes) next to CubeCL's
 * `subslices` ladder, whose pages follow the device's
 * `maxStorageBufferBindingSize`.
 *
 * Run: `deno run --allow-env bench/churn.ts` (env `SEEDS`, default "1,2,3,4,5";
 * `OPS`, default 10000; `MEMORY`, layouts to compare, default
 * "compact,subslices"; `REPORT=1` prints each client's memory report).
 */

import { createClient, formatMemoryReport, type MemoryConfiguration } from "../mod.ts";
import { runChurn } from "../tests/memory/_churn.ts";
import { formatBytes } from "../src/_util/format.ts";

const SEEDS = (Deno.env.get("SEEDS") ?? "1,2,3,4,5").split(",").map(Number);
const OPS = Number(Deno.env.get("OPS") ?? 10000);
const LAYOUTS = (Deno.env.get("MEMORY") ?? "compact,subslices").split(",") as MemoryConfiguration[];

const adapter = await navigator.gpu.requestAdapter();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const memory of LAYOUTS) {
  const end: number[] = [];
  const high: number[] = [];
  for (const seed of SEEDS) {
    await using client = await createClient({ memory });
    const run = runChurn((size) => client.empty(size), seed, () => client.memoryUsage().bytesReserved, OPS);
    const reserved = client.memoryUsage().bytesReserved;
    end.push(reserved / run.peak);
    high.push(run.reservedPeak / run.peak);
    console.log(
      `${memory} seed ${seed}: peak live ${formatBytes(run.peak)}, reserved ${formatBytes(reserved)} ` +
        `(high-water ${formatBytes(run.reservedPeak)}), ratio ${end.at(-1)!.toFixed(3)}`,
    );
    if (Deno.env.get("REPORT")) console.log(formatMemoryReport(client.memoryReport()));
    run.releaseAll();
  }
  console.log(
    `churn ${memory} on ${adapter?.info.description}: reserved ÷ peak live median ${median(end).toFixed(3)}, ` +
      `max ${Math.max(...end).toFixed(3)}; high-water ÷ peak live median ${median(high).toFixed(3)}, max ${
        Math.max(...high).toFixed(3)
      }`,
  );
}

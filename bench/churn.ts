/**
 * Memory churn: how much device memory the default pool layout reserves for a
 * workload of mixed sizes, as `reserved ÷ peak live` at the end. The pattern
 * (issue 18): 10,000 operations, about 45% releases of a random live handle
 * and 55% allocations (80% of 256 B–64 KiB, 20% of 64 KiB–1 MiB, uniform in
 * each range), at most 300 live at once. Several seeds, each in a fresh
 * client; the ratio depends on page sizes, which follow the device's
 * `maxStorageBufferBindingSize`, so it differs between adapters.
 *
 * Run: `deno run --allow-env bench/churn.ts` (env `SEEDS`, default "1,2,3,4,5";
 * `OPS`, default 10000; `MEMORY` a layout name, default the client's default).
 */

import { createClient, formatMemoryReport, type Handle, type MemoryConfiguration } from "../mod.ts";

const SEEDS = (Deno.env.get("SEEDS") ?? "1,2,3,4,5").split(",").map(Number);
const OPS = Number(Deno.env.get("OPS") ?? 10000);
const MEMORY = Deno.env.get("MEMORY") as MemoryConfiguration | undefined;

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ratios: number[] = [];
for (const seed of SEEDS) {
  await using client = await createClient(MEMORY === undefined ? {} : { memory: MEMORY });
  const r = rng(seed);
  const live: { h: Handle; size: number }[] = [];
  let liveBytes = 0;
  let peak = 0;
  for (let i = 0; i < OPS; i++) {
    if (live.length > 0 && (r() < 0.45 || live.length >= 300)) {
      const [x] = live.splice(Math.floor(r() * live.length), 1);
      x!.h.release();
      liveBytes -= x!.size;
      continue;
    }
    const size = r() < 0.8 ? 256 + Math.floor(r() * (65536 - 256)) : 65536 + Math.floor(r() * (1048576 - 65536));
    live.push({ h: client.empty(size), size });
    liveBytes += size;
    peak = Math.max(peak, liveBytes);
  }
  const usage = client.memoryUsage();
  const ratio = usage.bytesReserved / peak;
  ratios.push(ratio);
  console.log(
    `seed ${seed}: peak live ${(peak / 2 ** 20).toFixed(1)} MiB, reserved ${
      (usage.bytesReserved / 2 ** 20).toFixed(1)
    } MiB, ratio ${ratio.toFixed(3)}`,
  );
  if (Deno.env.get("REPORT")) console.log(formatMemoryReport(client.memoryReport()));
  for (const x of live) x.h.release();
}
const sorted = [...ratios].sort((a, b) => a - b);
console.log(
  `churn ${MEMORY ?? "default"} on ${(await navigator.gpu.requestAdapter())?.info.description}: reserved ÷ peak live ` +
    `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)}, max ${sorted[sorted.length - 1]!.toFixed(3)}`,
);

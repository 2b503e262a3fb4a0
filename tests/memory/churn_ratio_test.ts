/**
 * Issue 18.3 (memory churn): the default layout fits a workload of mixed
 * sizes on every adapter. The churn pattern of `_churn.ts` runs against the
 * default pools on a fake storage for the limits of several adapters (the
 * ratio depends only on the pools and the limits), twenty seeds each, as
 * `bench/churn.ts` runs it through a client.
 *
 * `reserved ÷ peak live` at the end: median at most 1.10 (1.06 measured; it
 * was 1.15 when empty small pages waited 1,000 reservations before going back,
 * and CubeCL's ladder gives 1.18 at a 128 MiB binding limit and 1.78 at
 * 2 GiB), no seed above 1.22. The reservation's own high-water mark stays
 * within 1.25× the peak: a non-moving allocator cannot go much lower on this
 * pattern (an unbounded first-fit arena ends at 1.16 median), so the end
 * figure also counts pages given back after the peak.
 */

import assert from "node:assert/strict";
import { resolveMemoryConfiguration } from "../../src/memory/memory_config.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { FakeStorage } from "../_fakes.ts";
import { runChurn } from "./_churn.ts";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

/** `[maxStorageBufferBindingSize, maxBufferSize, what has them]`. */
const LIMITS: [number, number, string][] = [
  [128 * MiB, 256 * MiB, "WebGPU defaults (llvmpipe)"],
  [128 * MiB, 128 * MiB, "defaults with maxBufferSize 128 MiB"],
  [1 * GiB, 1 * GiB, "1 GiB"],
  [2 * GiB, 2 * GiB, "2 GiB (wgpu on NVIDIA: Vulkan's range capped at 2^31)"],
  [2 * GiB, 64 * GiB, "2 GiB binding, large maxBufferSize"],
  [4 * GiB - 4, 4 * GiB, "4 GiB - 4"],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function churnOnFakes(maxPageSize: number, maxBufferSize: number, seed: number) {
  const storage = new FakeStorage(256);
  const pools = resolveMemoryConfiguration("compact", { maxPageSize, maxBufferSize, alignment: 256 });
  const mm = new MemoryManager(storage, { pools, label: "churn" });
  const run = runChurn(
    (size) => {
      const d = mm.reserve(size);
      return { release: () => d.drop() };
    },
    seed,
    () => mm.usage().bytesReserved,
  );
  return { ...run, reserved: mm.usage().bytesReserved, mm, storage };
}

for (const [page, buffer, what] of LIMITS) {
  Deno.test(`the default layout ends the churn within 1.10x of the peak live bytes (median of 20 seeds) with ${what}`, () => {
    const end: number[] = [];
    const high: number[] = [];
    for (const seed of SEEDS) {
      const run = churnOnFakes(page, buffer, seed);
      end.push(run.reserved / run.peak);
      high.push(run.reservedPeak / run.peak);
    }
    const figures = `end ${end.map((x) => x.toFixed(3)).join(" ")}; high-water ${
      high.map((x) => x.toFixed(3)).join(" ")
    }`;
    assert.ok(median(end) <= 1.10, figures);
    assert.ok(Math.max(...end) <= 1.22, figures);
    assert.ok(Math.max(...high) <= 1.25, figures);
  });
}

Deno.test("the churn ends with the same reservation whatever the binding limit: the small pages do not follow it", () => {
  const reserved = LIMITS.map(([page, buffer]) => churnOnFakes(page, buffer, 3).reserved);
  assert.deepEqual(new Set(reserved).size, 1, `reserved: ${reserved.join(", ")}`);
});

Deno.test("after the churn, releasing everything and a cleanup give every page back", () => {
  const run = churnOnFakes(2 * GiB, 2 * GiB, 1);
  run.releaseAll();
  run.mm.cleanup(true);
  assert.deepEqual(run.mm.usage(), { numberAllocs: 0, bytesInUse: 0, bytesPadding: 0, bytesReserved: 0 });
  assert.equal(run.storage.liveBuffers, 0);
});

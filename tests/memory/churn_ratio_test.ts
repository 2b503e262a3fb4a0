/**
 * Issue 18.3 (memory churn): the default layout fits a workload of mixed
 * sizes on every adapter. The churn pattern of `_churn.ts` runs against the
 * default pools on a fake storage for the limits of several adapters (the
 * ratio depends only on the pools and the limits), twenty seeds each, as
 * `bench/churn.ts` runs it through a client.
 *
 * `reserved ÷ peak live` at the end: median at most 1.12 (1.10 measured; it
 * was 1.15 when empty small pages waited 1,000 reservations before going back,
 * and CubeCL's ladder gives 1.18 at a 128 MiB binding limit and 1.78 at
 * 2 GiB), no seed above 1.22. The reservation's own high-water mark stays
 * within 1.25× the peak: a non-moving allocator cannot go much lower on this
 * pattern (an unbounded first-fit arena ends at 1.16 median), so the end
 * figure also counts pages given back after the peak.
 *
 * The short wait must not cost a steady loop its zero-`createBuffer` state:
 * a loop whose quiet phase outlasts the wait makes the pools wait longer.
 *
 * With compaction (the pools move live slices to pack their pages, through a
 * mover), every seed ends within 1.15x, on the seeds the policy was tuned on
 * (1-20) and on others (101-140), where a non-moving allocator's high-water
 * mark alone is 1.12-1.21x on this pattern.
 */

import assert from "node:assert/strict";
import { resolveMemoryConfiguration } from "../../src/memory/memory_config.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { FakeMover, FakeStorage } from "../_fakes.ts";
import { churnRng, runChurn, trainingLoop } from "./_churn.ts";

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

function churnOnFakes(maxPageSize: number, maxBufferSize: number, seed: number, moving = false) {
  const storage = new FakeStorage(256);
  const pools = resolveMemoryConfiguration("compact", { maxPageSize, maxBufferSize, alignment: 256 })
    .map((p) => p.kind === "sliced" ? { ...p, compaction: moving } : p);
  const mm = new MemoryManager(storage, { pools, label: "churn" });
  mm.setMover(new FakeMover());
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
  Deno.test(`without moves, the default layout ends the churn within 1.12x of the peak live bytes (median of 20 seeds) with ${what}`, () => {
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
    assert.ok(median(end) <= 1.12, figures);
    assert.ok(Math.max(...end) <= 1.22, figures);
    assert.ok(Math.max(...high) <= 1.25, figures);
  });
}

const UNTUNED = Array.from({ length: 40 }, (_, i) => i + 101);

Deno.test("with compaction (moves), the churn ends within 1.15x of the peak live bytes on every seed, seeds 1-20 (tuned on) and 101-140 (not)", () => {
  for (const [seeds, what] of [[SEEDS, "tuned"], [UNTUNED, "untuned"]] as const) {
    const end: number[] = [];
    const high: number[] = [];
    const made: number[] = [];
    for (const seed of seeds) {
      const run = churnOnFakes(2 * GiB, 2 * GiB, seed, true);
      end.push(run.reserved / run.peak);
      high.push(run.reservedPeak / run.peak);
      made.push(run.storage.createdBuffers);
    }
    const figures = `${what}: end ${end.map((x) => x.toFixed(3)).join(" ")}; high-water ${
      high.map((x) => x.toFixed(3)).join(" ")
    }; buffers made ${made.join(" ")}`;
    assert.ok(Math.max(...end) <= 1.15, figures);
    assert.ok(median(end) <= 1.08, figures);
    assert.ok(Math.max(...high) <= 1.2, figures);
  }
});

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

Deno.test("a training-like loop whose quiet phase outlasts the page wait stops creating buffers after a few rounds", () => {
  const storage = new FakeStorage(256);
  const pools = resolveMemoryConfiguration("compact", {
    maxPageSize: 128 * MiB,
    maxBufferSize: 256 * MiB,
    alignment: 256,
  });
  const mm = new MemoryManager(storage, { pools, label: "loop" });
  // About 600 reservations a round in which the activations' pages stand empty (see trainingLoop).
  const made = trainingLoop((size) => mm.reserve(size), () => storage.allocations.length, 10, churnRng(7));
  // Pages given back in the quiet phase and made again in the next forward pass grow the wait past the phase.
  assert.ok(made.slice(0, 2).every((n) => n > 0), `buffers made per round: ${made.join(", ")}`);
  assert.deepEqual(made.slice(5), [0, 0, 0, 0, 0], `buffers made per round: ${made.join(", ")}`);
});

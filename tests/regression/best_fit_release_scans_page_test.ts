/**
 * Found by `bench/scaling.ts` (issue 33, point 4): on the default layout, a
 * random release + allocation cost 3.5 µs with 1,000 allocations live and
 * 14 µs with 100,000 (raw `destroy` + `createBuffer`: 3.8 and 6.2 µs), on the
 * 2-core VM. A best-fit pool looked at every slice of a page whenever one of
 * them was released (to merge free neighbours), went through all its pages
 * at each reservation to find those with releases, and looked at every page
 * at each periodic sweep (every `deallocPeriod / 5` reservations), so the
 * work of one allocation grew with the allocations live. Now a release lists
 * its slice on its page and the page in its pool's queue, the pool merges
 * around that slice only, and a sweep looks at the entirely free pages only.
 * Counted here in slices looked at (`Slice.isFree` calls), never in time.
 */

import assert from "node:assert/strict";
import { type ManagedMemory, Slice } from "../../src/contract/managed_memory.ts";
import { compactPreset } from "../../src/memory/memory_config.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { SlicedPool } from "../../src/memory/sliced_pool.ts";
import { FakeStorage } from "../_fakes.ts";
import { rng } from "../_gpu.ts";

/** Runs `fn` counting the calls of `Slice.isFree` it makes. */
function countingIsFree(fn: () => void): number {
  const isFree = Slice.prototype.isFree;
  let calls = 0;
  Slice.prototype.isFree = function (this: Slice) {
    calls++;
    return isFree.call(this);
  };
  try {
    fn();
  } finally {
    Slice.prototype.isFree = isFree;
  }
  return calls;
}

/** Slices looked at per random release + allocation (256 B to 2 KiB) with `live` allocations live on the default layout. */
function slicesPerOp(live: number): number {
  const storage = new FakeStorage(256);
  const pools = compactPreset({ maxPageSize: 128 << 20, alignment: 256, maxBufferSize: 2 ** 31 - 1 });
  const mm = new MemoryManager(storage, { pools, label: "scaling" });
  const r = rng(live);
  const size = () => 256 * (1 + Math.floor(r() * 8));
  const held: ManagedMemory[] = [];
  for (let i = 0; i < live; i++) held.push(mm.reserve(size()));
  const ops = 2000;
  const calls = countingIsFree(() => {
    for (let i = 0; i < ops; i++) {
      const j = Math.floor(r() * live);
      held[j]!.drop();
      held[j] = mm.reserve(size());
    }
  });
  return calls / ops;
}

Deno.test("a release and an allocation look at a few slices, as many with 40,000 allocations live as with 1,000", () => {
  const few = slicesPerOp(1000);
  const many = slicesPerOp(40_000);
  // Before the fix: 891 and 915 (every slice of the released slice's page, and every page at each sweep).
  assert.ok(few <= 8, `${few.toFixed(1)} slices looked at per op with 1,000 live`);
  assert.ok(many <= few + 1, `${many.toFixed(1)} slices per op with 40,000 live, ${few.toFixed(1)} with 1,000`);
});

Deno.test("a best-fit pool's sweep looks at its idle pages only, not at every page it holds", () => {
  for (const pages of [100, 2000]) {
    const storage = new FakeStorage(32);
    // Sweeps at every reservation (deallocPeriod 5 → every 1).
    const pool = new SlicedPool(
      storage,
      { pageSize: 1024, maxSliceSize: 1024, fit: "best", deallocPeriod: 5 },
      "sweep",
    );
    const held: ManagedMemory[] = [];
    for (let i = 0; i < pages; i++) held.push(pool.alloc(1024, false)); // one full page each
    held.pop()!.drop();
    held.pop()!.drop();
    let clock = 0;
    const calls = countingIsFree(() => {
      for (let i = 0; i < 10; i++) pool.cleanup(++clock, false);
    });
    assert.equal(pool.pageCount, pages - 2, "the two idle pages went after deallocPeriod reservations");
    // Two per idle page (its freed slice, then whether the page is one free slice); before the fix 1,088 for 100 pages.
    assert.ok(calls <= 4, `${calls} slices looked at over 10 sweeps of ${pages} pages`);
    for (const d of held) d.drop();
  }
});

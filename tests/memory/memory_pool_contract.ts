/**
 * A contract every `MemoryPool` keeps, run against each pool kind by
 * `pools_test.ts` (one shared suite, as Hono does for its routers).
 */

import assert from "node:assert/strict";
import type { ManagedMemory } from "../../server.ts";
import type { MemoryPool } from "../../src/memory/memory_pool.ts";
import { FakeStorage } from "../_fakes.ts";

/** Reserves through the pool the way the manager does: reuse, else grow. */
function reserve(pool: MemoryPool, size: number): ManagedMemory {
  return pool.tryReserve(size) ?? pool.alloc(size, false);
}

/** Registers the contract tests for one pool kind. */
export function runMemoryPoolContract(name: string, make: (storage: FakeStorage) => MemoryPool): void {
  Deno.test(`${name}: reserve() gives aligned, non-overlapping slices of the requested size`, () => {
    const storage = new FakeStorage(32);
    const pool = make(storage);
    const live = [100, 32, 1, 64, 250].map((s) => reserve(pool, s));
    const ranges = live.map((d) => ({
      page: d.slice!.page,
      from: d.slice!.offset,
      to: d.slice!.offset + d.slice!.size,
    }));
    live.forEach((d, i) => {
      assert.equal(d.slice!.size, [100, 32, 1, 64, 250][i]);
      assert.equal(d.slice!.offset % 32, 0);
    });
    for (let i = 0; i < ranges.length; i++) {
      for (let j = i + 1; j < ranges.length; j++) {
        const a = ranges[i]!;
        const b = ranges[j]!;
        assert.ok(a.page !== b.page || a.to <= b.from || b.to <= a.from, `slices ${i} and ${j} overlap`);
      }
    }
  });

  Deno.test(`${name}: usage() counts live slices, their bytes and padding`, () => {
    const pool = make(new FakeStorage(32));
    const a = reserve(pool, 100);
    reserve(pool, 64);
    let u = pool.usage();
    assert.deepEqual([u.numberAllocs, u.bytesInUse, u.bytesPadding], [2, 164, 28]);
    assert.ok(u.bytesReserved >= 192);
    a.drop();
    u = pool.usage();
    assert.deepEqual([u.numberAllocs, u.bytesInUse, u.bytesPadding], [1, 64, 0]);
  });

  Deno.test(`${name}: a released slice is reused for the same size, but not while a binding pins it`, () => {
    const storage = new FakeStorage(32);
    const pool = make(storage);
    const a = reserve(pool, 96);
    const slice = a.slice;
    a.pin();
    a.drop();
    const b = reserve(pool, 96);
    assert.notEqual(b.slice, slice, "a pinned slice is not reused");
    a.unpin();
    const c = pool.tryReserve(96);
    assert.ok(c !== null, "the slice is free once unpinned");
    assert.equal(c.slice, slice);
    assert.equal(storage.createdBuffers, pool.pageCount);
  });

  Deno.test(`${name}: an explicit cleanup after releasing everything frees every page`, () => {
    const storage = new FakeStorage(32);
    const pool = make(storage);
    const all = [10, 500, 96, 33].map((s) => reserve(pool, s));
    all.forEach((d) => d.drop());
    pool.cleanup(0, true);
    storage.flush();
    assert.equal(pool.usage().bytesReserved, 0);
    assert.equal(pool.pageCount, 0);
    assert.equal(storage.liveBuffers, 0);
    const again = reserve(pool, 40);
    assert.equal(again.slice!.size, 40);
  });

  Deno.test(`${name}: report() agrees with usage() and tracks the high-water marks`, () => {
    const pool = make(new FakeStorage(32));
    const ds = [200, 300, 100].map((s) => reserve(pool, s));
    const peak = pool.pageCount;
    ds.forEach((d) => d.drop());
    pool.cleanup(0, true);
    const r = pool.report();
    assert.deepEqual(r.usage, pool.usage());
    assert.equal(r.pages, 0);
    assert.equal(r.pagesPeak, peak);
    assert.equal(r.largestAlloc, 300);
    assert.deepEqual(r.shape, pool.shape);
  });
}

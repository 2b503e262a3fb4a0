/**
 * Contract under test: CubeCL's memory management, behaviours 21-35 of the
 * contract's acceptance list, on a fake storage (no GPU) with alignment 32
 * unless a case says otherwise.
 */

import assert from "node:assert/strict";
import { InstallMemoryPoolsError, IoError } from "../../mod.ts";
import { ManagedMemory } from "../../server.ts";
import { MemoryManager } from "../../src/memory/memory_manager.ts";
import { FakeStorage } from "../_fakes.ts";
import type { PoolConfig } from "../../mod.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

function manager(pools: PoolConfig[], alignment = 32, persistentMemory?: "enabled" | "size-match") {
  const storage = new FakeStorage(alignment);
  const mm = new MemoryManager(storage, { pools, label: "test", persistentMemory });
  return { storage, mm };
}

/** Drops the caller's reference of a reserved descriptor (what releasing a handle does). */
function drop(d: ManagedMemory): void {
  d.drop();
}

Deno.test("21: canMut() is false while two user clones exist and true after one is released", () => {
  const { mm } = manager([{ kind: "exclusive", maxAllocSize: 512 }]);
  const d = mm.reserve(100);
  assert.equal(d.canMut(), true);
  d.retain();
  assert.equal(d.canMut(), false);
  d.drop();
  assert.equal(d.canMut(), true);
  d.pin(); // a binding does not count for canMut
  assert.equal(d.canMut(), true);
});

Deno.test("22: an exclusive pool reuses its page for the same size with identical usage", () => {
  const { mm } = manager([{ kind: "exclusive", maxAllocSize: 512 }]);
  const a = mm.reserve(100);
  const u1 = mm.usage();
  assert.equal(u1.bytesInUse, 100);
  assert.ok(u1.bytesReserved >= 100 && u1.bytesReserved <= 512, `reserved ${u1.bytesReserved}`);
  drop(a);
  mm.reserve(100);
  assert.deepEqual(mm.usage(), u1);
});

Deno.test("23: sliced pools carve pages, reuse freed slices and add pages when full", () => {
  {
    const { mm } = manager([{ kind: "sliced", pageSize: 2048, maxSliceSize: 2048 }]);
    mm.reserve(512);
    mm.reserve(512);
    const u = mm.usage();
    assert.deepEqual([u.numberAllocs, u.bytesInUse, u.bytesReserved], [2, 1024, 2048]);
  }
  {
    const { mm } = manager([{ kind: "sliced", pageSize: 512, maxSliceSize: 512 }]);
    drop(mm.reserve(512));
    mm.reserve(512);
    assert.equal(mm.usage().bytesReserved, 512);
  }
  {
    const { mm } = manager([{ kind: "sliced", pageSize: 1024, maxSliceSize: 1024 }]);
    mm.reserve(768);
    mm.reserve(768);
    assert.equal(mm.report().dynamic[0]!.pages, 2);
  }
});

Deno.test("24: padding to the alignment is accounted separately (alignment 50, page 500)", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 500, maxSliceSize: 500 }], 50);
  const a = mm.reserve(40);
  const b = mm.reserve(40);
  assert.equal(mm.usage().bytesPadding, 20);
  assert.equal(b.slice!.offset - a.slice!.offset, 50);
});

Deno.test("25: a capped sliced pool refuses past its cap, fits again after a release, and keeps the cap after cleanup", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 1024, maxSliceSize: 1024, maxPoolSize: 2048 }]);
  const a = mm.reserve(1024);
  mm.reserve(1024);
  assert.throws(
    () => mm.reserve(1024),
    (e: unknown) => e instanceof IoError && e.kind === "pool-capacity-exceeded" && e.capacity === 2048,
  );
  assert.equal(mm.usage().bytesReserved, 2048);
  drop(a);
  const c = mm.reserve(1024);
  drop(c);
  mm.cleanup(true);
  assert.equal(mm.usage().bytesReserved, 1024, "the page still in use survives");
  mm.reserve(1024);
  assert.throws(() => mm.reserve(1024), (e: unknown) => e instanceof IoError && e.kind === "pool-capacity-exceeded");
});

Deno.test("25b: after releasing everything, an explicit cleanup leaves nothing reserved", () => {
  const { mm, storage } = manager([{ kind: "sliced", pageSize: 1024, maxSliceSize: 1024, maxPoolSize: 2048 }]);
  const a = mm.reserve(1024);
  const b = mm.reserve(1024);
  drop(a);
  drop(b);
  mm.cleanup(true);
  assert.equal(mm.usage().bytesReserved, 0);
  assert.equal(storage.liveBuffers, 0);
  mm.reserve(1024);
  mm.reserve(1024);
  assert.throws(() => mm.reserve(1024), IoError);
});

Deno.test("26: a cap smaller than a page shrinks the page; a cap below the alignment rejects everything", () => {
  {
    const { mm } = manager([{ kind: "sliced", pageSize: 2048, maxSliceSize: 2048, maxPoolSize: 512 }]);
    mm.reserve(256);
    assert.ok(mm.usage().bytesReserved <= 512);
    assert.throws(() => mm.reserve(1024), IoError);
  }
  {
    const { mm } = manager([{ kind: "sliced", pageSize: 2048, maxSliceSize: 2048, maxPoolSize: 16 }]);
    assert.throws(() => mm.reserve(8), IoError);
    assert.throws(() => mm.reserve(1024), IoError);
    assert.equal(mm.usage().bytesReserved, 0);
  }
});

Deno.test("27: a full capped arena spills to the next accepting pool", () => {
  const { mm } = manager([
    { kind: "sliced", pageSize: 1024, maxSliceSize: 1024, maxPoolSize: 1024 },
    { kind: "sliced", pageSize: 1024, maxSliceSize: 1024 },
  ]);
  mm.reserve(1024);
  mm.reserve(1024);
  const r = mm.report();
  assert.equal(mm.usage().bytesReserved, 2048);
  assert.deepEqual(r.dynamic.map((p) => p.pagesPeak), [1, 1]);
});

Deno.test("28: routing picks the first pool that accepts a size, not the best fit", () => {
  const { mm } = manager([
    { kind: "sliced", pageSize: 1 * MiB, maxSliceSize: 64 * KiB, maxPoolSize: 2 * MiB },
    { kind: "sliced", pageSize: 16 * MiB, maxSliceSize: 16 * MiB, maxPoolSize: 32 * MiB },
  ]);
  for (let i = 0; i < 4; i++) mm.reserve(1 * MiB);
  assert.equal(mm.usage().bytesReserved, 16 * MiB);
  mm.reserve(4 * KiB);
  assert.equal(mm.usage().bytesReserved, 17 * MiB);
});

Deno.test("29: persistent windows nest; allocations in a window go to the persistent pool", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 4096, maxSliceSize: 4096 }]);
  mm.setMode("persistent");
  mm.setMode("persistent");
  mm.setMode("auto");
  assert.equal(mm.mode, "persistent");
  mm.reserve(1000);
  let r = mm.report();
  assert.equal(r.dynamic[0]!.pagesPeak, 0);
  assert.equal(r.persistent.pages, 1);
  assert.equal(r.persistent.usage.bytesInUse, 1000);
  mm.setMode("auto");
  assert.equal(mm.mode, "auto");
  mm.reserve(1000);
  r = mm.report();
  assert.equal(r.dynamic[0]!.pagesPeak, 1);
  mm.setMode("auto"); // saturates at zero
  assert.equal(mm.mode, "auto");
});

Deno.test("29b: persistent slices are reused only by exact effective size; size-match routes automatic allocations there", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 4096, maxSliceSize: 4096 }], 32, "size-match");
  mm.setMode("persistent");
  const w = mm.reserve(100);
  mm.setMode("auto");
  drop(w);
  const again = mm.reserve(120); // same effective size (128): reuses the persistent slice
  assert.equal(again.slice!.page, w.slice?.page ?? again.slice!.page);
  assert.equal(mm.report().persistent.pages, 1);
  assert.equal(mm.report().dynamic[0]!.pages, 0);
  mm.reserve(200); // no such size in the persistent pool: dynamic
  assert.equal(mm.report().dynamic[0]!.pages, 1);
});

Deno.test("30: installing pools while memory is live fails with PoolsInUse and keeps the old layout", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 1 * MiB, maxSliceSize: 1 * MiB, maxPoolSize: 1 * MiB }]);
  const live = mm.reserve(1 * MiB);
  const bigger: PoolConfig[] = [{ kind: "sliced", pageSize: 1 * MiB, maxSliceSize: 1 * MiB, maxPoolSize: 4 * MiB }];
  assert.throws(
    () => mm.installPools(bigger),
    (e: unknown) => e instanceof InstallMemoryPoolsError && e.kind === "pools-in-use" && e.bytesInUse > 0,
  );
  assert.throws(() => mm.reserve(1 * MiB), IoError, "the old cap is still enforced");
  drop(live);
  mm.installPools(bigger);
  mm.reserve(1 * MiB);
  mm.reserve(1 * MiB);
  assert.equal(mm.usage().bytesInUse, 2 * MiB);
  assert.equal(mm.report().dynamic[0]!.shape.kind, "sliced");
});

Deno.test("31: the measured plan: record a peak, cap the arena at it, and the replay fits", () => {
  const arena = (cap?: number): PoolConfig[] => [
    { kind: "sliced", pageSize: 1 * MiB, maxSliceSize: 1 * MiB, ...(cap ? { maxPoolSize: cap } : {}) },
  ];
  const workload = (mm: MemoryManager) => {
    const a = mm.reserve(600 * KiB);
    const b = mm.reserve(600 * KiB);
    drop(a);
    const c = mm.reserve(900 * KiB);
    drop(b);
    drop(c);
  };
  const { mm } = manager(arena());
  workload(mm);
  const r = mm.report().dynamic[0]!;
  assert.equal(r.largestAlloc, 900 * KiB);
  assert.equal(r.pagesPeak, 2);
  mm.cleanup(true);
  mm.installPools(arena(r.pagesPeak * 1 * MiB));
  workload(mm);
  assert.equal(mm.report().dynamic[0]!.pagesPeak, 2);
});

Deno.test("32: a dry-run reservation mints unmapped pages; resolving it maps them", () => {
  const { mm, storage } = manager([{ kind: "sliced", pageSize: 4096, maxSliceSize: 4096 }]);
  const d = mm.reserve(1000, true);
  let r = mm.report().dynamic[0]!;
  assert.equal(r.pages, 1);
  assert.equal(r.pagesUnmapped, 1);
  assert.equal(storage.createdBuffers, 0);
  mm.resolve(d);
  r = mm.report().dynamic[0]!;
  assert.equal(r.pagesUnmapped, 0);
  assert.equal(storage.createdBuffers, 1);
});

Deno.test("33: a direct pool pads to the alignment only, reuses exact sizes and reclaims at its watermark", () => {
  const { mm, storage } = manager([{ kind: "direct", reclaimAt: 1024 }]);
  const a = mm.reserve(100);
  assert.equal(mm.usage().bytesPadding, 28);
  assert.equal(mm.usage().bytesReserved, 128);
  drop(a);
  const b = mm.reserve(100);
  assert.equal(storage.createdBuffers, 1, "reused by exact size");
  const c = mm.reserve(500);
  drop(b);
  drop(c);
  assert.equal(mm.usage().bytesReserved, 128 + 512);
  // 512 + 640 > 1024: free buffers are released in index order until it fits.
  mm.reserve(512 + 32);
  assert.deepEqual(storage.destroyed.length, 0, "destruction is deferred to flush");
  assert.equal(mm.usage().bytesReserved, 544);
  const d = mm.reserve(64);
  drop(d);
  mm.cleanup(true);
  assert.equal(mm.usage().bytesReserved, 544);
  assert.equal(storage.destroyed.length, 3);
});

Deno.test("34: stale locations never alias another allocation", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 4096, maxSliceSize: 4096 }]);
  const never = new ManagedMemory();
  assert.throws(() => mm.resolve(never), (e: unknown) => e instanceof IoError && e.kind === "not-found");
  const reserved = mm.reserve(64);
  const user = new ManagedMemory();
  mm.bind(reserved, user);
  assert.throws(() => mm.resolve(reserved), (e: unknown) => e instanceof IoError && e.kind === "not-found");
  assert.equal(mm.resolve(user).size, 64);
  // A held binding survives an explicit cleanup that frees other pages.
  const other = mm.reserve(4000);
  user.pin();
  user.drop();
  drop(other);
  mm.cleanup(true);
  assert.equal(mm.resolve(user).size, 64);
  assert.equal(mm.report().dynamic[0]!.pages, 1);
  user.unpin();
  mm.cleanup(true);
  assert.equal(mm.report().dynamic[0]!.pages, 0);
  assert.throws(() => mm.resolve(user), IoError, "a freed and coalesced slice no longer resolves");
});

Deno.test("35: freeing every other allocation and reallocating similar sizes grows reservation by at most 10%", () => {
  const { mm } = manager([{ kind: "sliced", pageSize: 1 * MiB, maxSliceSize: 1 * MiB }]);
  const sizes = Array.from({ length: 200 }, (_, i) => 1000 + ((i * 7919) % 9000));
  const live = sizes.map((s) => mm.reserve(s));
  const before = mm.usage().bytesReserved;
  live.forEach((d, i) => i % 2 === 0 && drop(d));
  sizes.forEach((s, i) => i % 2 === 0 && mm.reserve(s - ((i * 31) % 100)));
  const after = mm.usage().bytesReserved;
  assert.ok(after <= before * 1.1, `reserved grew from ${before} to ${after}`);
});

Deno.test("an exclusive pool frees a never-reused idle page at its first sweep and keeps reused pages longer", () => {
  // deallocPeriod 50: a sweep runs before every 10th reservation of the manager.
  const { mm } = manager([{ kind: "exclusive", maxAllocSize: 4096, deallocPeriod: 50 }]);
  const pages = () => mm.report().dynamic[0]!.pages;
  const live: ManagedMemory[] = [];
  drop(mm.reserve(1000)); // reservation 1: page A, idle from now on
  for (let i = 2; i <= 9; i++) live.push(mm.reserve(3000)); // too big to reuse A
  assert.equal(pages(), 9);
  live.push(mm.reserve(3000)); // reservation 10: the sweep frees A, then a new page is made
  assert.equal(pages(), 9);
  let b = mm.reserve(1000); // 11: page B
  for (let i = 12; i <= 16; i++) {
    drop(b);
    b = mm.reserve(1000); // reused five times: its idle count drops to 0
  }
  drop(b);
  const before = pages();
  for (let i = 17; i <= 59; i++) live.push(mm.reserve(3000)); // sweeps at 20, 30, 40, 50
  assert.equal(pages(), before + 43, "B survives four sweeps");
  live.push(mm.reserve(3000)); // 60: fifth sweep frees B
  assert.equal(pages(), before + 43);
  live.forEach(drop);
  mm.cleanup(true);
  assert.equal(pages(), 0);
});

Deno.test("a size no pool accepts fails with buffer-too-big naming the largest pool", () => {
  const { mm } = manager([{ kind: "exclusive", maxAllocSize: 0 }, {
    kind: "sliced",
    pageSize: 1024,
    maxSliceSize: 256,
  }]);
  mm.reserve(0);
  mm.reserve(200);
  mm.reserve(900); // near-page stray (wastes < 20%) goes to the uncapped sliced pool
  assert.throws(
    () => mm.reserve(700),
    (e: unknown) => e instanceof IoError && e.kind === "buffer-too-big" && e.size === 700,
  );
  assert.throws(() => mm.reserve(5000), /largest pool serves 1 KiB/);
});

Deno.test("a reservation no pool accepts is refused before it counts or sweeps anything", () => {
  // deallocPeriod 50: a sweep runs before every 10th reservation of the manager.
  const { mm } = manager([{ kind: "exclusive", maxAllocSize: 4096, deallocPeriod: 50 }]);
  const pages = () => mm.report().dynamic[0]!.pages;
  const live: ManagedMemory[] = [];
  drop(mm.reserve(1000)); // reservation 1: page A, idle from now on
  for (let i = 2; i <= 9; i++) live.push(mm.reserve(3000));
  assert.throws(() => mm.reserve(5000), (e: unknown) => e instanceof IoError && e.kind === "buffer-too-big");
  assert.equal(pages(), 9, "the refused call freed no idle page");
  live.push(mm.reserve(3000)); // reservation 10: the sweep frees A, then a new page is made
  assert.equal(pages(), 9);
});

Deno.test("installing pools while a capture is armed frees the old pools' free pages", () => {
  const { storage, mm } = manager([{ kind: "sliced", pageSize: 2048, maxSliceSize: 2048 }]);
  drop(mm.reserve(512)); // a dynamic page, now free
  assert.equal(storage.liveBuffers, 1);
  mm.captureBegin();
  mm.installPools([{ kind: "exclusive", maxAllocSize: 4096 }]);
  mm.captureAbort();
  mm.cleanup(true);
  assert.equal(mm.usage().bytesReserved, 0);
  assert.equal(storage.liveBuffers, 0, "the old page's buffer is destroyed, not orphaned with its pool");
});

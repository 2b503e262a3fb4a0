/**
 * An exclusive pool with `sizeClasses` (the default layout's tail): each page
 * is sized to the class of its first request, at most one class step (2^(1/n))
 * above it, and a free page is reused only by a request of its class or the
 * class below, the smallest such page first. Without `sizeClasses` the pool
 * keeps CubeCL's moving-average sizing, where the first page of a pool for
 * allocations up to 2 GiB is about 1 GiB whatever was asked.
 */

import assert from "node:assert/strict";
import { ExclusivePool } from "../../src/memory/exclusive_pool.ts";
import { FakeStorage } from "../_fakes.ts";
import { rng } from "../_gpu.ts";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const step = 2 ** (1 / 8);

function reserve(pool: ExclusivePool, size: number) {
  return pool.tryReserve(size) ?? pool.alloc(size, false);
}

Deno.test("each page is at most one class step (and the alignment) above its first request", () => {
  const storage = new FakeStorage(256);
  const pool = new ExclusivePool(storage, { maxAllocSize: 2 * GiB, sizeClasses: 8 }, "tail");
  const r = rng(3);
  for (let i = 0; i < 500; i++) {
    const size = Math.floor(8 * MiB * 2 ** (r() * 7)); // 8 MiB to 1 GiB
    const d = reserve(pool, size);
    const page = d.slice!.page.storage.size;
    assert.ok(page >= size && page <= Math.ceil(size * step) + 256, `${size} B got a page of ${page} B`);
  }
  assert.ok(storage.allocations.every((b) => b % 256 === 0 && b <= 2 * GiB));
});

Deno.test("a free page is reused by a request of its class or the class below, the smallest such page first", () => {
  const storage = new FakeStorage(256);
  const pool = new ExclusivePool(storage, { maxAllocSize: 2 * GiB, sizeClasses: 8 }, "tail");
  const big = reserve(pool, 100 * MiB);
  const mid = reserve(pool, 40 * MiB);
  const bigPage = big.slice!.page;
  const midPage = mid.slice!.page;
  big.drop();
  mid.drop();
  assert.equal(pool.tryReserve(20 * MiB), null, "a 20 MiB request does not take a 40 MiB page");
  const again = pool.tryReserve(38 * MiB);
  assert.equal(again?.slice?.page, midPage, "38 MiB takes the 40 MiB page (one class below)");
  assert.equal(pool.tryReserve(40 * MiB), null, "the 100 MiB page is too far above 40 MiB");
  const near = pool.tryReserve(96 * MiB);
  assert.equal(near?.slice?.page, bigPage);
  assert.equal(storage.allocations.length, 2);
});

Deno.test("without size classes the first page follows CubeCL's moving average, however small the request", () => {
  const storage = new FakeStorage(256);
  const pool = new ExclusivePool(storage, { maxAllocSize: 2 * GiB }, "cubecl");
  reserve(pool, 20 * MiB);
  assert.ok(storage.allocations[0]! >= 0.98 * GiB, `first page ${storage.allocations[0]} B`);
  const classes = new ExclusivePool(storage, { maxAllocSize: 2 * GiB, sizeClasses: 8 }, "classes");
  reserve(classes, 20 * MiB);
  assert.ok(storage.allocations[1]! <= 20 * MiB * step + 256, `first page ${storage.allocations[1]} B`);
});

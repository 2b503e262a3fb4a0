/** Runs the shared `MemoryPool` contract against every pool kind. */

import assert from "node:assert/strict";
import { DirectPool } from "../../src/memory/direct_pool.ts";
import { ExclusivePool } from "../../src/memory/exclusive_pool.ts";
import { IoError } from "../../mod.ts";
import { PersistentPool } from "../../src/memory/persistent_pool.ts";
import { SlicedPool } from "../../src/memory/sliced_pool.ts";
import { FakeStorage } from "../_fakes.ts";
import { runMemoryPoolContract } from "./memory_pool_contract.ts";

runMemoryPoolContract("SlicedPool", (s) => new SlicedPool(s, { pageSize: 4096, maxSliceSize: 4096 }, "sliced"));
runMemoryPoolContract(
  "SlicedPool (best fit, idle pages given back)",
  (s) => new SlicedPool(s, { pageSize: 4096, maxSliceSize: 4096, fit: "best", deallocPeriod: 10 }, "sliced"),
);
runMemoryPoolContract("ExclusivePool", (s) => new ExclusivePool(s, { maxAllocSize: 1024 }, "exclusive"));
runMemoryPoolContract(
  "ExclusivePool (size classes)",
  (s) => new ExclusivePool(s, { maxAllocSize: 1024, sizeClasses: 8 }, "exclusive"),
);
runMemoryPoolContract("PersistentPool", (s) => new PersistentPool(s, "persistent"));
runMemoryPoolContract("DirectPool", (s) => new DirectPool(s, {}, "direct"));

Deno.test("a direct pool's refused allocation frees none of its idle buffers", () => {
  const storage = new FakeStorage(32);
  const pool = new DirectPool(storage, { reclaimAt: 100 }, "direct");
  pool.alloc(64, false).drop();
  storage.failWith = new IoError("buffer-too-big", "too big", { size: 1 << 20 });
  assert.throws(() => pool.alloc(1 << 20, false), IoError);
  storage.failWith = null;
  storage.flush();
  assert.equal(pool.pageCount, 1, "the idle buffer is still held");
  assert.deepEqual(storage.destroyed, []);
  assert.equal(pool.usage().bytesReserved, 64);
  const again = pool.tryReserve(64);
  assert.ok(again !== null, "the idle buffer is still reused");
});
